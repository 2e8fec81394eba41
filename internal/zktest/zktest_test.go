package zktest

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestStartServes: a go-zookeeper session on the started server creates
// and reads a znode.
func TestStartServes(t *testing.T) {
	s := Start(t)
	c, _, err := zk.Connect([]string{s.Addr().String()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create("/z", []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if got, _, err := c.Get("/z"); err != nil || string(got) != "v" {
		t.Fatalf("Get(/z) = %q, %v", got, err)
	}
}
