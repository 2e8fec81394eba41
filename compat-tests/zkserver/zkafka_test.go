//go:build compat

package zkserver_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestZkafkaLifecycle is TestApacheLifecycle against `zkafka zookeeper`.
// compat.sh runs it once ZKAFKA_ZK_READY=1.
func TestZkafkaLifecycle(t *testing.T) {
	s := zkserver.StartZkafka(t, zkserver.Options{ExtendedTypes: true, ContainerCheckInterval: time.Second})
	c := connect(t, s.Addr())
	if _, err := c.Create("/persist", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	s.Restart()
	c2 := connect(t, s.Addr())
	if data, _, err := c2.Get("/persist"); err != nil || string(data) != "x" {
		t.Fatalf("after restart Get(/persist) = %q, %v", data, err)
	}
	c2.Close()
	s.Kill()
	if s.Running() {
		t.Fatal("still running after Kill")
	}
}
