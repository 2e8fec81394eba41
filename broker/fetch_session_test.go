package broker

import (
	"slices"
	"testing"
	"time"

	"github.com/zkafka/zkafka/kproto"
)

// sessReq is a Fetch request of version 12 (topic names) or 13 (ids) for
// partitions 0..n-1 of topic "t" (id {1}).
func sessReq(version int16, replica, id, epoch int32, parts ...int32) *kproto.FetchRequest {
	req := &kproto.FetchRequest{Version: version, ReplicaID: replica, SessionID: id, SessionEpoch: epoch}
	if len(parts) > 0 {
		t := kproto.FetchTopic{Topic: "t", TopicID: [16]byte{1}}
		if version >= 13 {
			t.Topic = ""
		}
		for _, p := range parts {
			t.Partitions = append(t.Partitions, kproto.FetchPartition{Partition: p, FetchOffset: int64(10 * p), PartitionMaxBytes: 100})
		}
		req.Topics = append(req.Topics, t)
	}
	return req
}

func forget(req *kproto.FetchRequest, parts ...int32) *kproto.FetchRequest {
	f := kproto.FetchForgottenTopic{Topic: "t", TopicID: [16]byte{1}, Partitions: parts}
	if req.Version >= 13 {
		f.Topic = ""
	}
	req.Forgotten = append(req.Forgotten, f)
	return req
}

// sessionParts lists a session's partitions in order.
func sessionParts(s *fetchSession) []int32 {
	var out []int32
	for _, p := range s.parts {
		out = append(out, p.key.partition)
	}
	return out
}

func TestFetchSessionCacheOpen(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type step struct {
		req      func(id int32) *kproto.FetchRequest // id: the session created by the first step
		code     kproto.ErrorCode
		session  bool    // a session is answered
		full     bool    // a full answer
		parts    []int32 // the session's partitions afterwards
		sessions int     // sessions in the cache afterwards
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"v6 is sessionless", []step{
			{req: func(int32) *kproto.FetchRequest { return sessReq(6, -1, 0, -1, 0) }, full: true},
		}},
		{"epoch -1 is sessionless", []step{
			{req: func(int32) *kproto.FetchRequest { return sessReq(12, -1, 0, -1, 0, 1) }, full: true},
		}},
		{"create then increment", []step{
			{req: func(int32) *kproto.FetchRequest { return sessReq(12, -1, 0, 0, 0, 1) }, session: true, full: true, parts: []int32{0, 1}, sessions: 1},
			{req: func(id int32) *kproto.FetchRequest { return sessReq(12, -1, id, 1) }, session: true, parts: []int32{0, 1}, sessions: 1},
			{req: func(id int32) *kproto.FetchRequest { return sessReq(12, -1, id, 2, 2) }, session: true, parts: []int32{0, 1, 2}, sessions: 1},
		}},
		{"wrong epoch", []step{
			{req: func(int32) *kproto.FetchRequest { return sessReq(12, -1, 0, 0, 0) }, session: true, full: true, parts: []int32{0}, sessions: 1},
			{req: func(id int32) *kproto.FetchRequest { return sessReq(12, -1, id, 2) }, code: kproto.CodeInvalidFetchSessionEpoch, sessions: 1},
			{req: func(id int32) *kproto.FetchRequest { return sessReq(12, -1, id, 1) }, session: true, parts: []int32{0}, sessions: 1},
			{req: func(id int32) *kproto.FetchRequest { return sessReq(12, -1, id, 1) }, code: kproto.CodeInvalidFetchSessionEpoch, sessions: 1},
		}},
		{"unknown id", []step{
			{req: func(int32) *kproto.FetchRequest { return sessReq(12, -1, 77, 1, 0) }, code: kproto.CodeFetchSessionIDNotFound},
		}},
		{"topic ids must not change", []step{
			{req: func(int32) *kproto.FetchRequest { return sessReq(13, -1, 0, 0, 0) }, session: true, full: true, parts: []int32{0}, sessions: 1},
			{req: func(id int32) *kproto.FetchRequest { return sessReq(12, -1, id, 1) }, code: codeFetchSessionTopicIDError, sessions: 1},
			{req: func(id int32) *kproto.FetchRequest { return sessReq(13, -1, id, 1) }, session: true, parts: []int32{0}, sessions: 1},
		}},
		{"forgotten topics", []step{
			{req: func(int32) *kproto.FetchRequest { return sessReq(13, 2, 0, 0, 0, 1, 2, 3) }, session: true, full: true, parts: []int32{0, 1, 2, 3}, sessions: 1},
			{req: func(id int32) *kproto.FetchRequest { return forget(sessReq(13, 2, id, 1), 1, 3) }, session: true, parts: []int32{0, 2}, sessions: 1},
			{req: func(id int32) *kproto.FetchRequest { return forget(sessReq(13, 2, id, 2, 3), 9) }, session: true, parts: []int32{0, 2, 3}, sessions: 1},
			// Forgetting every partition ends the session: a sessionless answer.
			{req: func(id int32) *kproto.FetchRequest { return forget(sessReq(13, 2, id, 3), 0, 2, 3) }, full: true},
			{req: func(id int32) *kproto.FetchRequest { return sessReq(13, 2, id, 4) }, code: kproto.CodeFetchSessionIDNotFound},
		}},
		{"FINAL_EPOCH closes", []step{
			{req: func(int32) *kproto.FetchRequest { return sessReq(12, -1, 0, 0, 0) }, session: true, full: true, parts: []int32{0}, sessions: 1},
			{req: func(id int32) *kproto.FetchRequest { return sessReq(12, -1, id, -1, 0) }, full: true},
			{req: func(id int32) *kproto.FetchRequest { return sessReq(12, -1, id, 1) }, code: kproto.CodeFetchSessionIDNotFound},
		}},
		{"a full fetch naming a session replaces it", []step{
			{req: func(int32) *kproto.FetchRequest { return sessReq(12, -1, 0, 0, 0) }, session: true, full: true, parts: []int32{0}, sessions: 1},
			{req: func(id int32) *kproto.FetchRequest { return sessReq(12, -1, id, 0, 5) }, session: true, full: true, parts: []int32{5}, sessions: 1},
			{req: func(id int32) *kproto.FetchRequest { return sessReq(12, -1, id, 1) }, code: kproto.CodeFetchSessionIDNotFound, sessions: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFetchSessionCache(10)
			first := int32(0)
			for i, st := range tt.steps {
				s, full, code := c.open(st.req(first), t0)
				if code != st.code || (s != nil) != st.session || full != st.full {
					t.Fatalf("step %d: session %v full %v code %v, want %v %v %v", i, s != nil, full, code, st.session, st.full, st.code)
				}
				if s != nil {
					if first == 0 {
						first = s.id
					}
					if got := sessionParts(s); !equalInt32s(got, st.parts) {
						t.Fatalf("step %d: partitions %v, want %v", i, got, st.parts)
					}
				}
				if n := c.len(); n != st.sessions {
					t.Fatalf("step %d: %d sessions, want %d", i, n, st.sessions)
				}
			}
		})
	}
}

func equalInt32s(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFetchSessionCacheEviction: with every slot taken, a new session
// takes a stale one's slot, else the least valuable evictable one's
// (unprivileged before privileged, smaller before larger), and a young
// session yields only to a privileged newcomer.
func TestFetchSessionCacheEviction(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type sess struct {
		follower bool
		parts    int
		created  time.Duration // after t0
		used     time.Duration
	}
	tests := []struct {
		name     string
		have     []sess
		follower bool
		parts    int
		at       time.Duration
		evicted  int // index in have, -1 for none; -2: no session created
	}{
		{"stale goes first", []sess{{false, 50, 0, 0}, {false, 1, 0, 10 * time.Minute}}, false, 1, 10 * time.Minute, 0},
		{"young sessions stay for a consumer", []sess{{false, 1, 0, 0}, {false, 2, 0, 0}}, false, 10, time.Minute, -2},
		{"a follower evicts a young consumer", []sess{{true, 1, 0, 0}, {false, 5, 0, 0}}, true, 1, time.Minute, 1},
		{"a follower does not evict a young follower", []sess{{true, 1, 0, 0}, {true, 1, 0, 0}}, true, 100, time.Minute, -2},
		{"old: the smallest yields to a larger", []sess{{false, 3, 0, 2 * time.Minute}, {false, 2, 0, 2 * time.Minute}}, false, 4, 3 * time.Minute, 1},
		{"old: not to one as small", []sess{{false, 3, 0, 2 * time.Minute}, {false, 2, 0, 2 * time.Minute}}, false, 2, 3 * time.Minute, -2},
		{"old: unprivileged before privileged", []sess{{true, 1, 0, 2 * time.Minute}, {false, 9, 0, 2 * time.Minute}}, true, 1, 3 * time.Minute, 1},
		{"old privileged yields to a privileged larger", []sess{{true, 1, 0, 2 * time.Minute}, {true, 9, 0, 2 * time.Minute}}, true, 5, 3 * time.Minute, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFetchSessionCache(int32(len(tt.have)))
			var ids []int32
			for _, h := range tt.have {
				replica := int32(-1)
				if h.follower {
					replica = 2
				}
				parts := make([]int32, h.parts)
				for i := range parts {
					parts[i] = int32(i)
				}
				s, _, _ := c.open(sessReq(12, replica, 0, 0, parts...), t0.Add(h.created))
				if s == nil {
					t.Fatal("no session created with free slots")
				}
				s.lastUsed = t0.Add(h.used)
				ids = append(ids, s.id)
			}
			replica := int32(-1)
			if tt.follower {
				replica = 2
			}
			parts := make([]int32, tt.parts)
			for i := range parts {
				parts[i] = int32(i)
			}
			s, _, _ := c.open(sessReq(12, replica, 0, 0, parts...), t0.Add(tt.at))
			if (s != nil) != (tt.evicted != -2) {
				t.Fatalf("session created: %v, want %v", s != nil, tt.evicted != -2)
			}
			for i, id := range ids {
				_, kept := c.sessions[id]
				if kept == (i == tt.evicted) {
					t.Errorf("session %d kept: %v", i, kept)
				}
			}
		})
	}
}

// TestFetchSessionAnswer: an incremental answer carries a partition only
// with news, and the rebuilt request holds the session's fetch fields.
func TestFetchSessionAnswer(t *testing.T) {
	c := newFetchSessionCache(1)
	s, _, _ := c.open(sessReq(12, 2, 0, 0, 0, 1), time.Unix(0, 0))
	k := s.keyOf("t", [16]byte{}, 0)
	r := kproto.FetchPartitionResponse{HighWatermark: 5, LogStartOffset: 0, PreferredReadReplica: -1}
	steps := []struct {
		name    string
		change  func(r *kproto.FetchPartitionResponse)
		records int64
		want    bool
	}{
		{"first answer", func(*kproto.FetchPartitionResponse) {}, 0, true},
		{"nothing new", func(*kproto.FetchPartitionResponse) {}, 0, false},
		{"records", func(*kproto.FetchPartitionResponse) {}, 10, true},
		{"high watermark", func(r *kproto.FetchPartitionResponse) { r.HighWatermark = 6 }, 0, true},
		{"log start", func(r *kproto.FetchPartitionResponse) { r.LogStartOffset = 2 }, 0, true},
		{"quiet again", func(*kproto.FetchPartitionResponse) {}, 0, false},
		{"error", func(r *kproto.FetchPartitionResponse) { r.ErrorCode = kproto.CodeNotLeaderOrFollower }, 0, true},
		{"error gone, same watermark", func(r *kproto.FetchPartitionResponse) { r.ErrorCode = 0 }, 0, true},
		{"tags", func(r *kproto.FetchPartitionResponse) { r.Tags = kproto.AppendDivergingEpochTags(nil, 1, 2) }, 0, true},
	}
	for _, st := range steps {
		st.change(&r)
		if got := s.answerLocked(k, &r, st.records); got != st.want {
			t.Errorf("%s: answered %v, want %v", st.name, got, st.want)
		}
		r.Tags = nil
	}
	var dst kproto.FetchRequest
	inc := sessReq(12, 2, s.id, 1)
	inc.MaxWaitMillis = 77
	s.fillLocked(&dst, inc)
	if dst.MaxWaitMillis != 77 || len(dst.Topics) != 1 || len(dst.Topics[0].Partitions) != 2 ||
		dst.Topics[0].Partitions[1].FetchOffset != 10 || dst.Topics[0].Topic != "t" {
		t.Fatalf("rebuilt request %+v", dst)
	}
	allocs := testing.AllocsPerRun(100, func() { s.fillLocked(&dst, inc) })
	if allocs != 0 {
		t.Errorf("fillLocked allocates %v times", allocs)
	}
}

// TestFetchSessionRotation: partitions answered with records move to the
// end of the session, the others keep their order.
func TestFetchSessionRotation(t *testing.T) {
	c := newFetchSessionCache(1)
	s, _, _ := c.open(sessReq(13, 2, 0, 0, 0, 1, 2, 3, 4), time.Unix(0, 0))
	r := kproto.FetchPartitionResponse{PreferredReadReplica: -1}
	for _, round := range []struct {
		records []int32
		want    []int32
	}{
		{[]int32{1, 3}, []int32{0, 2, 4, 1, 3}},
		{nil, []int32{0, 2, 4, 1, 3}},
		{[]int32{0}, []int32{2, 4, 1, 3, 0}},
	} {
		for _, p := range sessionParts(s) {
			n := int64(0)
			if slices.Contains(round.records, p) {
				n = 10
			}
			s.answerLocked(s.keyOf("", [16]byte{1}, p), &r, n)
		}
		s.rotateLocked()
		if got := sessionParts(s); !slices.Equal(got, round.want) {
			t.Fatalf("records on %v: order %v, want %v", round.records, got, round.want)
		}
		for i, cp := range s.parts {
			if s.index[cp.key] != i {
				t.Fatalf("index of %v is %d, at %d", cp.key, s.index[cp.key], i)
			}
		}
	}
}
