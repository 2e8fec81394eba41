package raftnode

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// testSM is a StateMachine that records every applied entry. Apply returns
// the number of entries applied so far (so results are ordered like
// indexes).
type testSM struct {
	mu       sync.Mutex
	ents     []applied
	restores int
}

type applied struct {
	Index uint64
	Data  string
}

func (s *testSM) Apply(index uint64, data []byte) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.ents); n > 0 && s.ents[n-1].Index >= index {
		panic(fmt.Sprintf("apply %d after %d", index, s.ents[n-1].Index))
	}
	s.ents = append(s.ents, applied{index, string(data)})
	return len(s.ents)
}

func (s *testSM) Snapshot() func(w io.Writer) error {
	s.mu.Lock()
	ents := slices.Clone(s.ents)
	s.mu.Unlock()
	return func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		b := binary.BigEndian.AppendUint64(nil, uint64(len(ents)))
		bw.Write(b)
		for _, e := range ents {
			b = binary.BigEndian.AppendUint64(b[:0], e.Index)
			b = binary.BigEndian.AppendUint32(b, uint32(len(e.Data)))
			bw.Write(b)
			bw.WriteString(e.Data)
		}
		return bw.Flush()
	}
}

func (s *testSM) Restore(r io.Reader) error {
	br := bufio.NewReader(r)
	var hdr [12]byte
	if _, err := io.ReadFull(br, hdr[:8]); err != nil {
		return err
	}
	ents := make([]applied, binary.BigEndian.Uint64(hdr[:8]))
	for i := range ents {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return err
		}
		data := make([]byte, binary.BigEndian.Uint32(hdr[8:]))
		if _, err := io.ReadFull(br, data); err != nil {
			return err
		}
		ents[i] = applied{binary.BigEndian.Uint64(hdr[:8]), string(data)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ents = ents
	s.restores++
	return nil
}

// state returns a copy of what the state machine applied.
func (s *testSM) state() []applied {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ents)
}

func (s *testSM) restoreCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restores
}

// datas returns the payloads applied, in order.
func datas(ents []applied) []string {
	out := make([]string, len(ents))
	for i, e := range ents {
		out[i] = e.Data
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes (no fixed
// sleeps: it returns as soon as cond holds).
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// testLogger logs to stderr when RAFTNODE_LOG is set, else discards.
func testLogger() *slog.Logger {
	if os.Getenv("RAFTNODE_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// testConfig is a fast-ticking configuration for node id in dir.
func testConfig(id uint64, dir string) Config {
	return Config{
		ID: id, Dir: dir, TickInterval: 5 * time.Millisecond,
		ElectionTicks: 10, HeartbeatTicks: 1, Logger: testLogger(),
	}
}

func mustStart(t testing.TB, cfg Config, sm StateMachine) *Node {
	t.Helper()
	n, err := Start(cfg, sm)
	if err != nil {
		t.Fatalf("Start(%d): %v", cfg.ID, err)
	}
	return n
}

func mustPropose(t testing.TB, n *Node, data string) (any, uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, idx, err := n.Propose(ctx, []byte(data))
	if err != nil {
		t.Fatalf("Propose(%q) on %d: %v", data, n.id, err)
	}
	return res, idx
}

// proposeOutcome is what the done callback of the i-th of a run of
// proposals was given.
type proposeOutcome struct {
	i     int
	index uint64
	err   error
}
