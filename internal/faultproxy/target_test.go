package faultproxy

import (
	"net"
	"testing"
	"time"
)

// TestSetTarget: a proxy made before its target (NewAt, target "") resets
// its connections; SetTarget points it at one, resetting the connections
// to the previous one, and "" marks it down again.
func TestSetTarget(t *testing.T) {
	p, err := NewAt("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	refused := func(when string) {
		t.Helper()
		if c, err := net.DialTimeout("tcp", p.Addr(), 5*time.Second); err == nil {
			defer c.Close()
			if !closedSoon(c) {
				t.Fatalf("%s: connection not reset", when)
			}
		}
	}
	refused("no target yet")
	p.SetTarget(echoServer(t))
	c := dial(t, p)
	if err := roundTrip(c, []byte("first")); err != nil {
		t.Fatal(err)
	}
	p.SetTarget(echoServer(t))
	if !closedSoon(c) {
		t.Fatal("the connection to the previous target was not reset")
	}
	if err := roundTrip(dial(t, p), []byte("second")); err != nil {
		t.Fatalf("to the new target: %v", err)
	}
	p.SetTarget("")
	refused("down")
}
