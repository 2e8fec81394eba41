package zkdata

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/quorum"
)

func server(t *testing.T) string {
	t.Helper()
	cfg := quorum.DefaultConfig(t.TempDir())
	cfg.TickTime = 200 * time.Millisecond
	cfg.ExtendedTypes = true
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := quorum.StartWithListener(cfg, slog.New(slog.DiscardHandler), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Addr().String()
}

func client(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, err := dial(addr, CopyOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestCopy copies a tree with data, nested nodes, a restrictive digest ACL
// above a child, an ephemeral and a container; the persistent nodes and
// ACLs arrive, the ephemeral does not, and the report says what was left.
func TestCopy(t *testing.T) {
	from, to := server(t), server(t)
	c := client(t, from)
	open := zk.WorldACL(zk.PermAll)
	must := func(_ string, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Create("/a", []byte("a"), 0, open))
	must(c.Create("/a/b", nil, 0, open))
	must(c.Create("/a/b/c", []byte("deep"), 0, open))
	must(c.Create("/locked", []byte("l"), 0, open))
	must(c.Create("/locked/kid", []byte("k"), 0, open))
	if _, err := c.SetACL("/locked", zk.DigestACL(zk.PermRead|zk.PermAdmin, "bob", "pw"), -1); err != nil {
		t.Fatal(err)
	}
	must(c.Create("/hidden", nil, 0, zk.DigestACL(zk.PermRead, "bob", "pw")))
	must(c.Create("/a/eph", nil, zk.FlagEphemeral, open))
	must(c.CreateContainer("/box", nil, zk.FlagContainer, open))
	must(c.Create("/box/x", nil, 0, open))
	// The target already has /a with other data: it is overwritten.
	must(client(t, to).Create("/a", []byte("old"), 0, open))

	var bar bytes.Buffer
	rep, err := Copy(CopyOptions{From: from, To: to, Path: "/", Auth: []string{"digest:bob:pw"}, Timeout: 10 * time.Second, Progress: &bar})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Created != 7 || len(rep.Redacted) != 1 || rep.Redacted[0] != "/hidden" || rep.Updated != 2 || rep.SkippedEphemeral != 1 || rep.SkippedSystem != 1 {
		t.Errorf("report %+v", rep)
	}
	d := client(t, to)
	if err := d.AddAuth("digest", []byte("bob:pw")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"/a": "a", "/a/b/c": "deep", "/locked": "l", "/locked/kid": "k"} {
		got, _, err := d.Get(p)
		if err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", p, got, err, want)
		}
	}
	acl, _, _ := d.GetACL("/locked")
	if len(acl) != 1 || acl[0].Scheme != "digest" || acl[0].Perms != zk.PermRead|zk.PermAdmin || strings.HasSuffix(acl[0].ID, ":x") {
		t.Errorf("/locked ACL %v", acl)
	}
	if ok, _, _ := d.Exists("/a/eph"); ok {
		t.Errorf("the ephemeral was copied")
	}
	out := rep.String()
	for _, w := range []string{"sessions", "ephemeral znodes: 1 skipped", "stats:", "containers and TTL", "hid"} {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q:\n%s", w, out)
		}
	}
}

// TestCopyUnreadable: without the credentials the locked node is reported,
// not silently dropped.
func TestCopyUnreadable(t *testing.T) {
	from, to := server(t), server(t)
	c := client(t, from)
	if _, err := c.Create("/locked", []byte("l"), 0, zk.DigestACL(zk.PermAll, "bob", "pw")); err != nil {
		t.Fatal(err)
	}
	rep, err := Copy(CopyOptions{From: from, To: to, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unreadable) != 1 || rep.Unreadable[0] != "/locked" || !strings.Contains(rep.String(), "refused to read") {
		t.Errorf("report %+v\n%s", rep, rep)
	}
}
