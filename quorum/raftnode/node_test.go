package raftnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// proposeMany proposes workers*per entries concurrently and checks the
// results: unique indexes, and results ordered like the indexes.
func proposeMany(t *testing.T, n *Node, prefix string, workers, per int) map[string]uint64 {
	t.Helper()
	type res struct {
		data  string
		index uint64
		count int
	}
	var mu sync.Mutex
	var all []res
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				data := fmt.Sprintf("%s-%d-%d", prefix, w, i)
				v, idx, err := n.Propose(context.Background(), []byte(data))
				if err != nil {
					t.Errorf("Propose(%s): %v", data, err)
					return
				}
				mu.Lock()
				all = append(all, res{data, idx, v.(int)})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	sort.Slice(all, func(i, j int) bool { return all[i].index < all[j].index })
	byData := map[string]uint64{}
	for i, r := range all {
		if i > 0 && (r.index == all[i-1].index || r.count <= all[i-1].count) {
			t.Fatalf("results out of order: %+v then %+v", all[i-1], r)
		}
		byData[r.data] = r.index
	}
	if len(byData) != workers*per {
		t.Fatalf("%d results for %d proposals", len(byData), workers*per)
	}
	return byData
}

// checkApplied checks that sm applied exactly the proposals in want (data
// -> index), once each, in index order, plus those in extra.
func checkApplied(t *testing.T, sm *testSM, want map[string]uint64) {
	t.Helper()
	st := sm.state()
	if !slices.IsSortedFunc(st, func(a, b applied) int { return int(a.Index) - int(b.Index) }) {
		t.Fatalf("state machine saw entries out of index order")
	}
	seen := map[string]bool{}
	for _, e := range st {
		if seen[e.Data] {
			t.Fatalf("entry %q applied twice", e.Data)
		}
		seen[e.Data] = true
		if idx, ok := want[e.Data]; ok && idx != e.Index {
			t.Fatalf("entry %q applied at %d, Propose said %d", e.Data, e.Index, idx)
		}
	}
	for d := range want {
		if !seen[d] {
			t.Fatalf("entry %q was never applied", d)
		}
	}
}

func TestSingleVoterConcurrentProposals(t *testing.T) {
	sm := &testSM{}
	n := mustStart(t, testConfig(1, t.TempDir()), sm)
	defer n.Stop()
	want := proposeMany(t, n, "p", 16, 40)
	checkApplied(t, sm, want)
	if len(sm.state()) != len(want) {
		t.Fatalf("applied %d entries, want %d", len(sm.state()), len(want))
	}
	st := n.Status()
	if st.Role != RoleLeader || st.Leader != 1 || st.AppliedIndex < uint64(len(want)) || st.Progress[1].Match < st.AppliedIndex {
		t.Fatalf("status %+v", st)
	}
	if err := n.ReadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestSingleVoterRestartReplays(t *testing.T) {
	dir := t.TempDir()
	sm := &testSM{}
	n := mustStart(t, testConfig(1, dir), sm)
	want := proposeMany(t, n, "a", 8, 25)
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.Propose(context.Background(), []byte("late")); !errors.Is(err, ErrStopped) {
		t.Fatalf("Propose after Stop: %v", err)
	}
	before := sm.state()

	sm2 := &testSM{}
	n2 := mustStart(t, testConfig(1, dir), sm2)
	defer n2.Stop()
	if got := sm2.state(); !slices.Equal(got, before) {
		t.Fatalf("after restart: %d entries, want %d", len(got), len(before))
	}
	_, idx := mustPropose(t, n2, "after")
	if idx <= before[len(before)-1].Index {
		t.Fatalf("new entry at %d, not after %d", idx, before[len(before)-1].Index)
	}
	want["after"] = idx
	checkApplied(t, sm2, want)
}

func TestSnapshotCompactionAndRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(1, dir)
	cfg.SnapshotEntries, cfg.SnapshotMargin, cfg.SnapshotRetain = 100, 10, 2
	cfg.segmentBytes = 4 << 10
	sm := &testSM{}
	n := mustStart(t, cfg, sm)
	want := proposeMany(t, n, "s", 4, 130)
	waitFor(t, 10*time.Second, "snapshots and compaction", func() bool {
		snaps, _ := listSnapshots(dir)
		first, _ := n.st.MemoryStorage.FirstIndex()
		return len(snaps) == 2 && first > 400
	})
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "log", "*.log"))
	if len(segs) == 0 || filepath.Base(segs[0]) == fmt.Sprintf("%020d.log", 1) {
		t.Fatalf("old log segments were not dropped: %v", segs)
	}
	before := sm.state()

	sm2 := &testSM{}
	n2 := mustStart(t, cfg, sm2)
	defer n2.Stop()
	if sm2.restoreCount() != 1 {
		t.Fatalf("restart restored %d snapshots, want 1", sm2.restoreCount())
	}
	if got := sm2.state(); !slices.Equal(got, before) {
		t.Fatalf("after restart from snapshot+tail: %d entries, want %d", len(got), len(before))
	}
	_, idx := mustPropose(t, n2, "more")
	want["more"] = idx
	checkApplied(t, sm2, want)
	if err := n2.Stop(); err != nil {
		t.Fatal(err)
	}

	// A damaged newest snapshot: Start falls back to the older one, whose
	// log tail was kept.
	snaps, _ := listSnapshots(dir)
	path := filepath.Join(dir, snapName(snaps[0]))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before = sm2.state()
	sm3 := &testSM{}
	n3 := mustStart(t, cfg, sm3)
	defer n3.Stop()
	if got := sm3.state(); sm3.restoreCount() != 1 || !slices.Equal(got, before) {
		t.Fatalf("after falling back to snapshot %d: %d entries (restores %d), want %d", snaps[1], len(got), sm3.restoreCount(), len(before))
	}
}

func TestTornLogTailRecovers(t *testing.T) {
	dir := t.TempDir()
	sm := &testSM{}
	n := mustStart(t, testConfig(1, dir), sm)
	for i := range 20 {
		mustPropose(t, n, fmt.Sprintf("t%d", i))
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	// A crash in the middle of the last write: cut the last segment.
	segs, _ := filepath.Glob(filepath.Join(dir, "log", "*.log"))
	last := segs[len(segs)-1]
	fi, err := os.Stat(last)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(last, fi.Size()-5); err != nil {
		t.Fatal(err)
	}
	before := sm.state()

	sm2 := &testSM{}
	n2 := mustStart(t, testConfig(1, dir), sm2)
	defer n2.Stop()
	// The torn entry (the last one) is gone; everything before it stays.
	waitFor(t, 5*time.Second, "replay of the surviving log", func() bool {
		return len(sm2.state()) == len(before)-1
	})
	if got := sm2.state(); !slices.Equal(got, before[:len(before)-1]) {
		t.Fatalf("after torn tail: %v, want %v", datas(got), datas(before[:len(before)-1]))
	}
	_, idx := mustPropose(t, n2, "after-crash")
	if idx <= before[len(before)-2].Index {
		t.Fatalf("new entry at %d overlaps the surviving log", idx)
	}
	if got := datas(sm2.state()); got[len(got)-1] != "after-crash" {
		t.Fatalf("last applied %q", got[len(got)-1])
	}
}

func TestProposeContextAndStop(t *testing.T) {
	cfg := testConfig(1, t.TempDir())
	n := mustStart(t, cfg, &testSM{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := n.Propose(ctx, []byte("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Propose with a canceled context: %v", err)
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := n.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if err := n.ReadIndex(context.Background()); !errors.Is(err, ErrStopped) {
		t.Fatalf("ReadIndex after Stop: %v", err)
	}
	if st := n.Status(); st.ID != 1 || st.Role != RoleLeader {
		t.Fatalf("status after stop: %+v", st)
	}
}

func TestConfigValidation(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []Config{
		{Dir: dir},
		{ID: 1},
		{ID: 1, Dir: dir, Peers: []Peer{{ID: 2}}},
		{ID: 1, Dir: dir, Peers: []Peer{{ID: 1}, {ID: 2}}},
		{ID: 1, Dir: dir, Peers: []Peer{{ID: 1, Learner: true}}},
		{ID: 1, Dir: dir, ElectionTicks: 2, HeartbeatTicks: 2},
	} {
		if n, err := Start(c, &testSM{}); err == nil {
			n.Stop()
			t.Errorf("Start(%+v) succeeded", c)
		} else if !strings.HasPrefix(err.Error(), "raftnode:") {
			t.Errorf("error %q", err)
		}
	}
}

func TestProposeFuncKeepsOrder(t *testing.T) {
	n := mustStart(t, testConfig(1, t.TempDir()), &testSM{})
	defer n.Stop()
	const count = 300
	out := make(chan proposeOutcome, count)
	for i := range count {
		n.ProposeFunc([]byte(fmt.Sprint(i)), func(_ any, index uint64, err error) {
			out <- proposeOutcome{i, index, err}
		})
	}
	idx := make([]uint64, count)
	for range count {
		r := <-out
		if r.err != nil {
			t.Fatalf("proposal %d: %v", r.i, r.err)
		}
		idx[r.i] = r.index
	}
	if !slices.IsSorted(idx) || idx[0] == idx[1] {
		t.Fatalf("entries not in call order: %v", idx)
	}
}

// TestProposeFuncAcrossStop checks that every callback is called exactly
// once even when Stop races with the calls.
func TestProposeFuncAcrossStop(t *testing.T) {
	n := mustStart(t, testConfig(1, t.TempDir()), &testSM{})
	var mu sync.Mutex
	calls := map[int]int{}
	var wg sync.WaitGroup
	const workers, per = 8, 200
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				key := w*per + i
				n.ProposeFunc([]byte("x"), func(_ any, _ uint64, err error) {
					if err != nil && !errors.Is(err, ErrStopped) {
						t.Errorf("callback: %v", err)
					}
					mu.Lock()
					calls[key]++
					mu.Unlock()
				})
			}
		})
	}
	n.Stop()
	wg.Wait()
	waitFor(t, 5*time.Second, "every callback", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(calls) == workers*per
	})
	for k, c := range calls {
		if c != 1 {
			t.Fatalf("callback %d called %d times", k, c)
		}
	}
}

// TestRecentStatus: RecentStatus follows the loop's status within a tick
// without going through the loop, and gives the final status after Stop.
func TestRecentStatus(t *testing.T) {
	sm := &testSM{}
	n := mustStart(t, testConfig(1, t.TempDir()), sm)
	proposeMany(t, n, "r", 1, 5)
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := n.RecentStatus()
		if st.Role == RoleLeader && st.AppliedIndex >= 5 && st.Progress[1].Match >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("recent status %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	n.Stop()
	if st := n.RecentStatus(); st.ID != 1 || st.AppliedIndex < 5 {
		t.Fatalf("status after Stop %+v", st)
	}
}
