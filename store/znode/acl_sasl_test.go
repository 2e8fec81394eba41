package znode

import (
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

// TestSASLScheme: sasl ids in ACLs are valid (as Kerberos names) only
// with the sasl provider; "auth" takes the session's sasl ids; a sasl
// ACL admits its user, and the sasl user "super", and nobody else.
func TestSASLScheme(t *testing.T) {
	alice := zkproto.ID{Scheme: "sasl", ID: "alice"}
	sasl := func(id string) []zkproto.ACL {
		return []zkproto.ACL{{Perms: zkproto.PermAll, ID: zkproto.ID{Scheme: "sasl", ID: id}}}
	}
	apply := func(h *harness, op Op, provider bool, auth ...zkproto.ID) zkproto.Err {
		txn := h.txn(op)
		txn.Auth, txn.SASLScheme = auth, provider
		res, _ := h.tree.Apply(txn)
		return res[0].Err
	}
	for _, tc := range []struct {
		id       string
		provider bool
		want     zkproto.Err
	}{
		{"alice", false, zkproto.ErrInvalidACL},
		{"alice", true, zkproto.ErrOK},
		{"zookeeper/host@EXAMPLE.COM", true, zkproto.ErrOK},
		{"alice@EXAMPLE.COM", true, zkproto.ErrOK},
		{"a@b@c", true, zkproto.ErrInvalidACL},
		{"a/b/c@R", true, zkproto.ErrInvalidACL},
	} {
		h := newHarness(t, Options{})
		if got := apply(h, createACL("/x", sasl(tc.id)), tc.provider); got != tc.want {
			t.Errorf("create with sasl:%s (provider %v): %v, want %v", tc.id, tc.provider, got, tc.want)
		}
	}

	h := newHarness(t, Options{})
	if got := apply(h, createACL("/auth", zkproto.CreatorAllACL), false, alice); got != zkproto.ErrInvalidACL {
		t.Fatalf("auth ACL from a sasl id without the provider: %v", got)
	}
	if got := apply(h, createACL("/auth", zkproto.CreatorAllACL), true, alice); got != zkproto.ErrOK {
		t.Fatalf("auth ACL from a sasl id: %v", got)
	}
	acl, _, _ := h.tree.ACL("/auth")
	if len(acl) != 1 || acl[0].ID != alice {
		t.Fatalf("auth ACL became %v", acl)
	}
	for _, tc := range []struct {
		who  zkproto.ID
		want zkproto.Err
	}{
		{alice, zkproto.ErrOK},
		{zkproto.ID{Scheme: "sasl", ID: "bob"}, zkproto.ErrNoAuth},
		{zkproto.ID{Scheme: "sasl", ID: "super"}, zkproto.ErrOK},
		{zkproto.ID{Scheme: "digest", ID: "alice"}, zkproto.ErrNoAuth},
	} {
		if got := h.tree.CheckACL("/auth", zkproto.PermRead, []zkproto.ID{tc.who}, false); got != tc.want {
			t.Errorf("read by %v: %v, want %v", tc.who, got, tc.want)
		}
	}
}
