package zkshell

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/quorum"
)

// syncBuffer is a bytes.Buffer safe for the shell's event printer and the
// test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPersistentWatchSurvivesReconnect: the client library re-sets the
// one-shot watches on a new connection but not addWatch's; the shell sets
// those again, as the Java client does, so a persistent watch keeps firing
// after the server restarts.
func TestPersistentWatchSurvivesReconnect(t *testing.T) {
	dir := t.TempDir()
	cfg := quorum.DefaultConfig(dir)
	log := slog.New(slog.DiscardHandler)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	srv, err := quorum.StartWithListener(cfg, log, l)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Close() }()

	var out syncBuffer
	s, err := Dial(addr, 20*time.Second, &out, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, line := range []string{"create /w", "addWatch /w"} {
		if err := s.Run(line); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out.String())
		}
	}

	srv.Close()
	if l, err = net.Listen("tcp", addr); err != nil {
		t.Fatal(err)
	}
	if srv, err = quorum.StartWithListener(cfg, log, l); err != nil {
		t.Fatal(err)
	}

	other, _, err := zk.Connect([]string{addr}, 20*time.Second, zk.WithLogger(quietLogger{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	want := "type:NodeDataChanged path:/w"
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; !strings.Contains(out.String(), want); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("no event for /w after the restart; the shell printed:\n%s", out.String())
		}
		other.Set("/w", []byte{byte(i)}, -1)
		time.Sleep(50 * time.Millisecond)
	}
}
