package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPortsAreFreeDistinctAndBelowTheEphemeralRange(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		p, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		if p < lowest || p >= ephemeralLow() {
			t.Fatalf("port %d outside [%d, %d)", p, lowest, ephemeralLow())
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("port %d not free: %v", p, err)
		}
		l.Close()
	}
}

func TestBusyPortSkipped(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if free(l.Addr().(*net.TCPAddr).Port) {
		t.Fatalf("a listening port reported free")
	}
}
