package quorum

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/zkafka/zkafka/quorum/raftnode"
)

// TestSessionTracker drives the tracker with an explicit clock: every
// method takes now, so expiry is decided by the times given, not by the
// wall clock.
func TestSessionTracker(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type step struct {
		do   string // track, touch, timeout, closing, forget, restart, expired
		id   int64
		ms   int           // the clock, ms after t0
		d    time.Duration // track/timeout: the session timeout
		want any           // touch/closing: bool; expired: []int64
	}
	tests := []struct {
		name  string
		steps []step
	}{{
		name: "a session expires once its timeout passes without a touch",
		steps: []step{
			{do: "track", id: 1, ms: 0, d: 4 * time.Second},
			{do: "expired", ms: 4000, want: []int64(nil)}, // not more than the timeout yet
			{do: "expired", ms: 4001, want: []int64{1}},
			{do: "expired", ms: 9000, want: []int64(nil)}, // reported once: it is closing now
			{do: "touch", id: 1, ms: 9000, want: false},   // a closing session takes no touches
		},
	}, {
		name: "a touch restarts the clock",
		steps: []step{
			{do: "track", id: 1, ms: 0, d: 4 * time.Second},
			{do: "touch", id: 1, ms: 3000, want: true},
			{do: "expired", ms: 6000, want: []int64(nil)},
			{do: "expired", ms: 7001, want: []int64{1}},
		},
	}, {
		name: "each session has its own timeout",
		steps: []step{
			{do: "track", id: 1, ms: 0, d: 2 * time.Second},
			{do: "track", id: 2, ms: 0, d: 6 * time.Second},
			{do: "expired", ms: 3000, want: []int64{1}},
			{do: "expired", ms: 7000, want: []int64{2}},
		},
	}, {
		name: "a renegotiated timeout applies",
		steps: []step{
			{do: "track", id: 1, ms: 0, d: 2 * time.Second},
			{do: "timeout", id: 1, d: 10 * time.Second},
			{do: "expired", ms: 9000, want: []int64(nil)},
			{do: "expired", ms: 10001, want: []int64{1}},
			{do: "timeout", id: 9, d: time.Second}, // unknown: not tracked by it
			{do: "expired", ms: 99999, want: []int64(nil)},
		},
	}, {
		name: "unknown and forgotten sessions take no touches",
		steps: []step{
			{do: "touch", id: 7, ms: 0, want: false},
			{do: "track", id: 7, ms: 0, d: time.Second},
			{do: "forget", id: 7},
			{do: "touch", id: 7, ms: 1, want: false},
			{do: "expired", ms: 5000, want: []int64(nil)},
		},
	}, {
		name: "a session whose close is in flight is not expired again",
		steps: []step{
			{do: "track", id: 1, ms: 0, d: time.Second},
			{do: "closing", id: 1, want: true},
			{do: "closing", id: 1, want: false},
			{do: "expired", ms: 5000, want: []int64(nil)},
		},
	}, {
		name: "a new leader starts every clock afresh and forgets closings",
		steps: []step{
			{do: "track", id: 1, ms: 0, d: 2 * time.Second},
			{do: "track", id: 2, ms: 0, d: 2 * time.Second},
			{do: "closing", id: 2, want: true},
			{do: "lease", ms: 5000},
			{do: "expired", ms: 6000, want: []int64(nil)},
			{do: "touch", id: 2, ms: 6000, want: true},
			{do: "expired", ms: 7001, want: []int64{1}},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newSessionTracker()
			for i, s := range tc.steps {
				var got any
				switch s.do {
				case "track":
					tr.track(s.id, s.d, at(s.ms))
				case "touch":
					got = tr.touch(s.id, at(s.ms))
				case "timeout":
					tr.setTimeout(s.id, s.d)
				case "closing":
					got = tr.markClosing(s.id)
				case "forget":
					tr.forget(s.id)
				case "lease":
					tr.lease(nil, at(s.ms))
				case "expired":
					ids := tr.expired(at(s.ms))
					slices.Sort(ids)
					got = ids
				default:
					t.Fatalf("step %d: unknown %q", i, s.do)
				}
				if s.want != nil && !reflect.DeepEqual(got, s.want) {
					t.Fatalf("step %d (%s id=%d at %dms): got %v, want %v", i, s.do, s.id, s.ms, got, s.want)
				}
			}
		})
	}
}

// TestSessionIDs: ids carry the server id in the top byte, are unique and
// increase; those of a later start do not collide with an earlier one's.
func TestSessionIDs(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	ids := newSessionIDs(3, start)
	var prev int64
	for i := range 1000 {
		id := ids.nextID()
		if got := uint64(id) >> 56; got != 3 {
			t.Fatalf("id %#x: server byte %d, want 3", id, got)
		}
		if i > 0 && id <= prev {
			t.Fatalf("id %#x after %#x", id, prev)
		}
		prev = id
	}
	if later := newSessionIDs(3, start.Add(time.Millisecond)).nextID(); later <= prev {
		t.Fatalf("first id %#x after a restart 1 ms later is not above %#x", later, prev)
	}
}

// TestSessionPassword: the password is a function of the id alone (any
// server can check it), 16 bytes, different per id.
func TestSessionPassword(t *testing.T) {
	a, b := sessionPassword(0x0300_0000_0000_0001), sessionPassword(0x0300_0000_0000_0002)
	if len(a) != 16 || len(b) != 16 {
		t.Fatalf("password lengths %d, %d; want 16", len(a), len(b))
	}
	if !bytes.Equal(a, sessionPassword(0x0300_0000_0000_0001)) {
		t.Fatal("the password of one id changed between calls")
	}
	if bytes.Equal(a, b) {
		t.Fatal("two ids share a password")
	}
}

// TestWhoDecidesExpiry: a standalone server and an ensemble's leader
// decide expiry; followers and observers forward activity instead.
func TestWhoDecidesExpiry(t *testing.T) {
	standalone := newServer(DefaultConfig(""), nil, nil)
	if !standalone.isLeader() || !standalone.serving() || standalone.ownerID() != 0 {
		t.Fatalf("standalone: isLeader %v serving %v ownerID %d; want true, true, 0",
			standalone.isLeader(), standalone.serving(), standalone.ownerID())
	}
	for _, tc := range []struct {
		role    raftnode.Role
		leader  uint64
		decides bool
		serving bool
	}{
		{raftnode.RoleLeader, 2, true, true},
		{raftnode.RoleFollower, 1, false, true},
		{raftnode.RoleLearner, 1, false, true},
		{raftnode.RoleFollower, 0, false, false},
	} {
		cfg := DefaultConfig("")
		cfg.MyID = 2
		s := newServer(cfg, nil, nil)
		s.ens = &ensemble{kick: make(chan struct{}, 1)}
		s.stateChanged(tc.leader, tc.role)
		if s.isLeader() != tc.decides || s.serving() != tc.serving || s.ownerID() != 2 {
			t.Errorf("%v with leader %d: isLeader %v serving %v ownerID %d; want %v, %v, 2",
				tc.role, tc.leader, s.isLeader(), s.serving(), s.ownerID(), tc.decides, tc.serving)
		}
	}
}
