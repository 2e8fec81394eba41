// Package zktest starts what tests of other packages need from a real
// ZooKeeper server: a standalone zkafka server (package quorum) on a free
// port of 127.0.0.1, its data in the test's temporary directory, stopped
// when the test ends.
package zktest

import (
	"log/slog"
	"net"
	"testing"

	"github.com/zkafka/zkafka/quorum"
)

// Start starts a standalone server with quorum's defaults; it is closed
// when t ends.
func Start(t testing.TB) *quorum.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := quorum.StartWithListener(quorum.DefaultConfig(t.TempDir()), slog.New(slog.DiscardHandler), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
