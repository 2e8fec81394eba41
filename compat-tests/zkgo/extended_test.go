package zkgo

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/quorum"
)

func TestContainerReapedAfterLastChild(t *testing.T) {
	ts := startServer(t, func(c *quorum.Config) { c.ContainerInterval = 50 * time.Millisecond })
	c, _ := ts.connect(5 * time.Second)
	must[string](t)(c.CreateContainer("/box", nil, zk.FlagContainer, openACL))
	must[string](t)(c.Create("/box/item", nil, 0, openACL))
	time.Sleep(200 * time.Millisecond) // several reaper rounds: a container with a child stays
	if ok, _, _ := c.Exists("/box"); !ok {
		t.Fatal("a container with a child was reaped")
	}
	_, _, gone, err := c.ExistsW("/box")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("/box/item", -1); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, gone); ev.Type != zk.EventNodeDeleted || ev.Path != "/box" {
		t.Fatalf("container not reaped after its last child: %+v", ev)
	}
}

func TestTTLNodes(t *testing.T) {
	ts := startServer(t, func(c *quorum.Config) {
		c.ExtendedTypes = true
		c.ContainerInterval = 50 * time.Millisecond
	})
	c, _ := ts.connect(5 * time.Second)
	must[string](t)(c.CreateTTL("/ttl", []byte("x"), zk.FlagTTL, openACL, 300*time.Millisecond))
	_, st, err := c.Exists("/ttl")
	if err != nil || st.EphemeralOwner != 0 {
		t.Fatalf("a TTL node shows ephemeralOwner 0: %+v %v", st, err)
	}
	checkFor(t, 5*time.Second, "TTL node reaped", func() bool {
		ok, _, err := c.Exists("/ttl")
		return err == nil && !ok
	})

	off := startServer(t)
	c2, _ := off.connect(5 * time.Second)
	if _, err := c2.CreateTTL("/ttl", nil, zk.FlagTTL, openACL, time.Second); err == nil || err.Error() != "unknown error: -6" {
		t.Fatalf("TTL with extended types off: %v, want unimplemented", err)
	}
}

func TestRestartFromSnapshotAndLogTail(t *testing.T) {
	ts := startServer(t, func(c *quorum.Config) { c.SnapCount = 50 })
	c, events := ts.connect(4 * time.Second)
	for i := 0; i < 180; i++ {
		must[string](t)(c.Create(fmt.Sprintf("/n%03d", i), []byte{byte(i)}, 0, openACL))
	}
	must[string](t)(c.Create("/eph", nil, zk.FlagEphemeral, openACL))
	ts.restart()
	waitState(t, events, zk.StateHasSession)
	children, _, err := c.Children("/")
	if err != nil || len(children) != 182 { // 180, /eph and /zookeeper
		t.Fatalf("after restart from snapshot: %d children, %v", len(children), err)
	}
	data, _, err := c.Get("/n179")
	if err != nil || len(data) != 1 || data[0] != 179 {
		t.Fatalf("last write: %v %v", data, err)
	}
	if _, st, err := c.Exists("/eph"); err != nil || st.EphemeralOwner != c.SessionID() {
		t.Fatalf("ephemeral after restart: %+v %v", st, err)
	}
}

func TestIPAndSuperDigest(t *testing.T) {
	// super:secret, digested as ZooKeeper's DigestAuthenticationProvider does.
	ts := startServer(t, func(c *quorum.Config) { c.SuperDigest = "super:lK75jTNcA+U9vtVEw5vB51mj/w4=" })
	c, _ := ts.connect(5 * time.Second)
	must[string](t)(c.Create("/local", []byte("l"), 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "ip", ID: "127.0.0.0/8"}}))
	must[string](t)(c.Create("/remote", []byte("r"), 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "ip", ID: "10.1.2.3"}}))
	if _, _, err := c.Get("/local"); err != nil {
		t.Fatalf("ip ACL matching the client: %v", err)
	}
	if _, _, err := c.Get("/remote"); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("ip ACL of another address: %v", err)
	}
	admin, _ := ts.connect(5 * time.Second)
	if err := admin.AddAuth("digest", []byte("super:secret")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := admin.Get("/remote"); err != nil || string(data) != "r" {
		t.Fatalf("super user: %q %v", data, err)
	}
}
