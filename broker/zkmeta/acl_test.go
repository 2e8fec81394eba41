package zkmeta

import (
	"slices"
	"testing"

	"github.com/zkafka/zkafka/broker/authz"
)

// The shapes below are the ones Kafka's AclAuthorizer writes (AclEntry
// and ZkData.scala); the tests pin them byte for byte.
func TestACLZNodeShapes(t *testing.T) {
	entries := []authz.Entry{
		{Principal: "User:alice", Host: "*", Operation: authz.OpRead, Permission: authz.PermAllow},
		{Principal: "User:CN=bob,O=zkafka", Host: "127.0.0.1", Operation: authz.OpClusterAction, Permission: authz.PermDeny},
	}
	got := string(EncodeACLs(entries))
	want := `{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"},` +
		`{"principal":"User:CN=bob,O=zkafka","permissionType":"Deny","operation":"ClusterAction","host":"127.0.0.1"}]}`
	if got != want {
		t.Fatalf("EncodeACLs:\n got %s\nwant %s", got, want)
	}
	back, err := DecodeACLs([]byte(want))
	if err != nil || !slices.Equal(back, entries) {
		t.Fatalf("DecodeACLs = %v, %v", back, err)
	}
	if _, err := DecodeACLs([]byte(`{"version":1,"acls":[{"principal":"alice","permissionType":"Allow","operation":"Read","host":"*"}]}`)); err == nil {
		t.Fatal("a principal without a type was read")
	}

	tx := authz.Pattern{Type: authz.ResourceTransactionalID, Name: "tx-1", PatternType: authz.PatternLiteral}
	if got := string(EncodeACLChange(tx)); got != "TRANSACTIONAL_ID:tx-1" {
		t.Fatalf("literal change %q", got)
	}
	pre := authz.Pattern{Type: authz.ResourceTopic, Name: "fin-", PatternType: authz.PatternPrefixed}
	if got := string(EncodeACLChange(pre)); got != `{"version":1,"resourceType":"TOPIC","name":"fin-","patternType":"PREFIXED"}` {
		t.Fatalf("extended change %s", got)
	}
	if got := ACLPath(pre); got != "/kafka-acl-extended/prefixed/Topic/fin-" {
		t.Fatalf("ACLPath %s", got)
	}
	if got := ACLPath(tx); got != "/kafka-acl/TransactionalId/tx-1" {
		t.Fatalf("ACLPath %s", got)
	}
	for _, c := range []struct {
		path, data string
		want       authz.Pattern
	}{
		{LiteralACLChangesPath, "TRANSACTIONAL_ID:tx-1", tx},
		{LiteralACLChangesPath, "Topic:a:b", authz.Pattern{Type: authz.ResourceTopic, Name: "a:b", PatternType: authz.PatternLiteral}},
		{ExtendedACLChanges, `{"version":1,"resourceType":"TOPIC","name":"fin-","patternType":"PREFIXED"}`, pre},
	} {
		if p, err := DecodeACLChange(c.path, []byte(c.data)); err != nil || p != c.want {
			t.Errorf("DecodeACLChange(%s) = %+v, %v", c.data, p, err)
		}
	}
	if _, err := DecodeACLChange(LiteralACLChangesPath, []byte("nonsense")); err == nil {
		t.Error("a change without a type was read")
	}
}
