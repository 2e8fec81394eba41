//go:build compat

package zkimport

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func connect(t *testing.T, addr string, timeout time.Duration) *zk.Conn {
	t.Helper()
	c, ev, err := zk.Connect([]string{addr}, timeout, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.State == zk.StateHasSession {
				return c
			}
		case <-deadline:
			t.Fatalf("no session with %s", addr)
		}
	}
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// scriptEveryOp runs one of each write that becomes a txn: create (plain,
// sequential, ephemeral), create2 (raw_test.go), createContainer, createTTL, setData,
// setACL, delete, multi (with check; and a failing one, an error txn),
// createSession and closeSession (with ephemerals to delete).
func scriptEveryOp(t *testing.T, addr, prefix string) {
	c := connect(t, addr, 10*time.Second)
	defer c.Close()
	open := zk.WorldACL(zk.PermAll)
	digest := zk.DigestACL(zk.PermRead|zk.PermAdmin, "alice", "secret")
	must(t, c.AddAuth("digest", []byte("alice:secret")), "auth")
	base := "/" + prefix
	_, err := c.Create(base, []byte("base"), 0, open)
	must(t, err, "create")
	for i := 0; i < 3; i++ {
		_, err = c.Create(base+"/seq-", []byte(fmt.Sprint(i)), zk.FlagSequence, open)
		must(t, err, "create sequential")
	}
	_, err = c.CreateContainer(base+"/container", nil, zk.FlagContainer, open)
	must(t, err, "create container")
	_, err = c.Create(base+"/container/child", []byte("c"), 0, open)
	must(t, err, "create under container")
	_, err = c.CreateTTL(base+"/ttl", []byte("ttl"), zk.FlagTTL, open, time.Hour)
	must(t, err, "create ttl")
	create2(t, addr, base+"/create2", []byte("c2"))
	_, err = c.Create(base+"/null", nil, 0, open)
	must(t, err, "create null")
	_, err = c.Create(base+"/acl", []byte("secret"), 0, digest)
	must(t, err, "create with digest ACL")
	_, err = c.Set(base, []byte("base v1"), 0)
	must(t, err, "set")
	_, err = c.SetACL(base+"/null", zk.WorldACL(zk.PermRead|zk.PermWrite|zk.PermCreate|zk.PermDelete), 0)
	must(t, err, "setACL")
	_, err = c.Create(base+"/gone", []byte("x"), 0, open)
	must(t, err, "create")
	must(t, c.Delete(base+"/gone", 0), "delete")
	_, err = c.Multi(
		&zk.CreateRequest{Path: base + "/m1", Data: []byte("m1"), Acl: open},
		&zk.CheckVersionRequest{Path: base, Version: 1},
		&zk.SetDataRequest{Path: base + "/m1", Data: []byte("m1 v1"), Version: 0},
		&zk.CreateRequest{Path: base + "/m2-", Data: nil, Acl: open, Flags: zk.FlagSequence},
	)
	must(t, err, "multi")
	_, err = c.Multi(
		&zk.CreateRequest{Path: base + "/never", Acl: open},
		&zk.CheckVersionRequest{Path: base, Version: 42},
	)
	if !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("failing multi: %v, want ErrBadVersion", err)
	}
	// A session that ends with ephemerals (closeSession deletes them).
	e := connect(t, addr, 10*time.Second)
	_, err = e.Create(base+"/eph", []byte("e"), zk.FlagEphemeral, open)
	must(t, err, "create ephemeral")
	_, err = e.Create(base+"/eph-seq-", nil, zk.FlagEphemeral|zk.FlagSequence, open)
	must(t, err, "create ephemeral sequential")
	e.Close()
	// The container's last child goes: the server's reaper deletes the
	// container later (deleteContainer).
	must(t, c.Delete(base+"/container/child", -1), "delete child")
}

// writeLoad creates n znodes under base in one session.
func writeLoad(t *testing.T, addr, base string, n int) {
	c := connect(t, addr, 10*time.Second)
	defer c.Close()
	open := zk.WorldACL(zk.PermAll)
	if _, err := c.Create(base, nil, 0, open); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		_, err := c.Create(fmt.Sprintf("%s/n%05d", base, i), []byte(fmt.Sprintf("value %d", i)), 0, open)
		must(t, err, "create")
	}
}

// holdEphemerals opens a session with a long timeout that owns ephemerals
// and is left open when the server dies, so the data dir holds it.
func holdEphemerals(t *testing.T, addr, base string) *zk.Conn {
	c := connect(t, addr, 30*time.Second)
	open := zk.WorldACL(zk.PermAll)
	_, err := c.Create(base+"-held", []byte("held"), zk.FlagEphemeral, open)
	must(t, err, "create held ephemeral")
	return c
}
