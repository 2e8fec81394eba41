package replica

import (
	"os"
	"slices"
	"testing"
	"time"
)

// TestLeaderStateRules drives a leader of replicas 1 (itself), 2 and 3
// through fetches and clock ticks, checking the high watermark, the
// followers to drop from the ISR and those to add back.
func TestLeaderStateRules(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	const lag = 100 * time.Millisecond
	type step struct {
		name      string
		fetch     int32 // follower that fetches (0: none)
		offset    int64 // its fetch offset
		leo       int64 // the leader's log end
		now       int
		commitISR []int32 // a committed ISR change before the step (nil: none)
		wantHW    int64
		wantOut   []int32
		wantIn    []int32
	}
	steps := []step{
		{name: "followers unknown: the hw stays", leo: 10, now: 0, wantHW: 0},
		{name: "2 at 10, 3 unknown", fetch: 2, offset: 10, leo: 10, now: 10, wantHW: 0},
		{name: "3 at 5", fetch: 3, offset: 5, leo: 10, now: 20, wantHW: 5},
		{name: "3 at 10: all caught up", fetch: 3, offset: 10, leo: 10, now: 30, wantHW: 10},
		{name: "2 catches up with the leader's 20", fetch: 2, offset: 20, leo: 20, now: 40, wantHW: 10},
		{name: "2 behind 25, but caught up as of its previous fetch", fetch: 2, offset: 20, leo: 25, now: 45, wantHW: 10},
		{name: "3 stops fetching: out after the lag, 2 not", leo: 25, now: 131, wantHW: 10, wantOut: []int32{3}},
		{name: "2 catches up; 3 still out", fetch: 2, offset: 25, leo: 25, now: 135, wantHW: 10, wantOut: []int32{3}},
		{name: "the shrink committed: hw moves to 2's", leo: 25, now: 136, commitISR: []int32{1, 2}, wantHW: 25},
		{name: "3 returns behind the hw: not in yet", fetch: 3, offset: 15, leo: 25, now: 140, wantHW: 25},
		{name: "3 reaches the hw: may rejoin", fetch: 3, offset: 25, leo: 25, now: 150, wantHW: 25, wantIn: []int32{3}},
		{name: "the hw never goes down", fetch: 2, offset: 12, leo: 25, now: 160, wantHW: 25, wantIn: []int32{3}},
	}
	s := NewLeaderState(1, []int32{1, 2, 3}, []int32{1, 2, 3}, 0, 0, t0)
	for _, st := range steps {
		if st.commitISR != nil {
			s.ISR, s.Pending = st.commitISR, nil
		}
		if st.fetch != 0 && !s.UpdateFollower(st.fetch, st.offset, st.leo, at(st.now)) {
			t.Fatalf("%s: follower %d unknown", st.name, st.fetch)
		}
		s.Advance(st.leo)
		if s.HW != st.wantHW {
			t.Fatalf("%s: hw %d, want %d", st.name, s.HW, st.wantHW)
		}
		if out := s.OutOfSync(at(st.now), lag); !slices.Equal(out, st.wantOut) {
			t.Fatalf("%s: out of sync %v, want %v", st.name, out, st.wantOut)
		}
		var in []int32
		for _, id := range []int32{2, 3} {
			if s.MayJoin(id) {
				in = append(in, id)
			}
		}
		if !slices.Equal(in, st.wantIn) {
			t.Fatalf("%s: may join %v, want %v", st.name, in, st.wantIn)
		}
	}
	if s.UpdateFollower(9, 0, 0, t0) {
		t.Fatal("a broker outside the assignment was taken as a follower")
	}
}

// TestPendingISR: an expansion counts for the high watermark while it is
// pending (the maximal ISR), and a follower must reach the leader
// epoch's start to rejoin.
func TestPendingISR(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := NewLeaderState(1, []int32{1, 2}, []int32{1}, 50, 50, t0) // leader since offset 50, ISR alone
	s.Advance(60)
	if s.HW != 60 {
		t.Fatalf("alone in the ISR: hw %d, want the log end 60", s.HW)
	}
	s.UpdateFollower(2, 40, 60, t0)
	if s.MayJoin(2) {
		t.Fatal("2 behind the epoch start may join")
	}
	s.UpdateFollower(2, 60, 70, t0)
	if !s.MayJoin(2) {
		t.Fatal("2 at the hw and past the epoch start may not join")
	}
	s.Pending = []int32{1, 2}
	if s.Advance(70); s.HW != 60 {
		t.Fatalf("pending expansion: hw %d, want 60 (2's)", s.HW)
	}
}

// TestShrinkOfStalledLog: the leader's log stopped moving (producers
// wait on the acks=all the lagging follower holds up), so the follower's
// last fetch was at the log end. It leaves the ISR once the lag has
// passed since that fetch, checked every lag/2. It rejoins after a fetch
// of its own (the broker asks MayJoin for the fetching follower only:
// TestStaleFollowerStaysOut).
func TestShrinkOfStalledLog(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const lag = 3 * time.Second
	s := NewLeaderState(1, []int32{1, 2, 3}, []int32{1, 2, 3}, 0, 0, t0)
	s.UpdateFollower(2, 17, 17, t0)
	s.UpdateFollower(3, 17, 17, t0)
	s.Advance(17)
	// The isr-expiration check every lag/2: 2 stops fetching at t0, 3 goes on.
	var shrunk time.Duration
	for tick := lag / 2; tick <= 3*lag; tick += lag / 2 {
		now := t0.Add(tick)
		s.UpdateFollower(3, 17, 17, now)
		if out := s.OutOfSync(now, lag); len(out) > 0 {
			if !slices.Equal(out, []int32{2}) {
				t.Fatalf("at %v: out of sync %v, want [2]", tick, out)
			}
			shrunk = tick
			break
		}
	}
	if shrunk == 0 || shrunk > lag+lag/2 {
		t.Fatalf("2 left the ISR at %v, want within lag + lag/2 (%v)", shrunk, lag+lag/2)
	}
	s.ISR = []int32{1, 3}
	s.Advance(17)
	if s.HW != 17 {
		t.Fatalf("hw %d, want 17", s.HW)
	}
	now := t0.Add(shrunk + 10*time.Millisecond)
	s.UpdateFollower(3, 17, 17, now)
	if s.MayJoin(3) {
		t.Fatal("3, in the ISR, may join")
	}
	s.UpdateFollower(2, 17, 17, now.Add(time.Second))
	if !s.MayJoin(2) {
		t.Fatal("2 fetched at the log end and the hw: may not join")
	}
}

// TestTruncationRules: the leader's divergence check and where the
// follower cuts, over the epoch caches of a leader and a follower that
// both hold epochs 0 and 2, the follower also an unreplicated epoch 3.
func TestTruncationRules(t *testing.T) {
	dir := t.TempDir()
	mustMkdir(t, dir+"/l", dir+"/f")
	leader, _ := OpenEpochCache(dir + "/l")
	follower, _ := OpenEpochCache(dir + "/f")
	mk := func(c *EpochCache, es ...EpochEntry) {
		for _, e := range es {
			if err := c.Assign(e.Epoch, e.StartOffset); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Leader: 0@0, 2@100, 4@150, log end 200. Follower: 0@0, 2@100,
	// 3@140 (written as leader, never replicated), log end 170.
	mk(leader, EpochEntry{0, 0}, EpochEntry{2, 100}, EpochEntry{4, 150})
	mk(follower, EpochEntry{0, 0}, EpochEntry{2, 100}, EpochEntry{3, 140})
	for _, tc := range []struct {
		name        string
		lastEpoch   int32
		fetchOffset int64
		wantDiv     bool
		wantEpoch   int32
		wantEnd     int64
	}{
		{"no epoch: not checked", Undefined, 170, false, Undefined, Undefined},
		{"the latest epoch: fine", 4, 180, false, Undefined, Undefined},
		{"epoch 2 ends at 150 in the leader: fine below", 2, 140, false, Undefined, Undefined},
		{"epoch 2 past its end", 2, 160, true, 2, 150},
		{"epoch 3 unknown: epoch 2 ends at 150", 3, 170, true, 2, 150},
		{"epoch 9 above all", 9, 10, true, Undefined, Undefined},
	} {
		e, end, div := Diverging(leader, tc.lastEpoch, tc.fetchOffset, 200)
		if div != tc.wantDiv || e != tc.wantEpoch || end != tc.wantEnd {
			t.Errorf("%s: Diverging = %d %d %v, want %d %d %v", tc.name, e, end, div, tc.wantEpoch, tc.wantEnd, tc.wantDiv)
		}
	}
	for _, tc := range []struct {
		name         string
		epoch        int32
		end          int64
		leo, hw      int64
		want         int64
		wantComplete bool
	}{
		{"leader's epoch 2 ends at 150; follower's epoch 2 ends at 140", 2, 150, 170, 120, 140, true},
		{"undefined end: to the high watermark", Undefined, Undefined, 170, 120, 120, true},
		{"no epochs on the leader: its end", Undefined, 130, 170, 120, 130, true},
		{"follower lacks the leader's epoch 1: cut to its epoch 0's end, ask again", 1, 90, 170, 120, 100, false},
		{"never past the follower's own end", 2, 150, 120, 100, 120, true},
	} {
		got, complete := TruncationOffset(follower, tc.epoch, tc.end, tc.leo, tc.hw)
		if got != tc.want || complete != tc.wantComplete {
			t.Errorf("%s: TruncationOffset = %d %v, want %d %v", tc.name, got, complete, tc.want, tc.wantComplete)
		}
	}
	for _, tc := range []struct {
		name                       string
		leo, start, end            int64
		truncate, startAt, fetchAt int64
	}{
		{"ahead of the leader's end (unclean election)", 170, 0, 150, 150, -1, 150},
		{"behind the leader's start (retention)", 40, 100, 200, -1, 100, 100},
		{"in range (a race): fetch again", 150, 0, 200, -1, -1, 150},
	} {
		tr, st, f := OutOfRange(tc.leo, tc.start, tc.end)
		if tr != tc.truncate || st != tc.startAt || f != tc.fetchAt {
			t.Errorf("%s: OutOfRange = %d %d %d, want %d %d %d", tc.name, tr, st, f, tc.truncate, tc.startAt, tc.fetchAt)
		}
	}
}

func mustMkdir(t *testing.T, dirs ...string) {
	for _, d := range dirs {
		if err := osMkdirAll(d); err != nil {
			t.Fatal(err)
		}
	}
}

func osMkdirAll(d string) error { return os.MkdirAll(d, 0o755) }

// TestSetReplicas: an assignment changed within the leader epoch adds the
// new follower (unknown until it fetches: it holds the high watermark
// back only once in the ISR), forgets the removed one and keeps what the
// others' fetches told.
func TestSetReplicas(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewLeaderState(1, []int32{1, 2}, []int32{1, 2}, 0, 10, now)
	s.UpdateFollower(2, 10, 10, now)
	s.SetReplicas([]int32{1, 3})
	if _, ok := s.Followers[2]; ok {
		t.Error("follower 2, no longer a replica, is still known")
	}
	f3, ok := s.Followers[3]
	if !ok || f3.LEO != -1 {
		t.Fatalf("follower 3: %+v, %v; want known with LEO -1", f3, ok)
	}
	s.UpdateFollower(3, 10, 10, now)
	s.SetReplicas([]int32{1, 3, 4})
	if got := s.Followers[3].LEO; got != 10 {
		t.Errorf("follower 3's LEO after an unrelated change: %d, want 10 (kept)", got)
	}
	if _, ok := s.Followers[1]; ok {
		t.Error("the leader itself became a follower")
	}
}
