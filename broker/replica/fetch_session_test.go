package replica

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFollowerFetchSession: the fetcher's session state decides what a
// fetch carries: everything when full; afterwards only changed or new
// partitions, the left-out ones as forgotten; and a full fetch again
// (naming the old session, or none) after a session error.
func TestFollowerFetchSession(t *testing.T) {
	id := [16]byte{7}
	tp := func(p int32) TopicPartition { return TopicPartition{Topic: "t", Partition: p} }
	pos := func(leo int64) Position { return Position{TopicID: id, LeaderEpoch: 1, LEO: leo, LastEpoch: 1} }
	want := func(ps map[int32]int64) map[[16]byte]map[int32]fetched {
		m := map[int32]fetched{}
		for p, leo := range ps {
			m[p] = fetched{tp: tp(p), pos: pos(leo)}
		}
		return map[[16]byte]map[int32]fetched{id: m}
	}
	// carried lists what a fetch of w carries and forgets, in order.
	carried := func(s *fetchSession, w map[[16]byte]map[int32]fetched) (sent, forgotten []int32) {
		for p, fd := range w[id] {
			if s.changed(fd.tp, fd.pos) {
				sent = append(sent, p)
			}
		}
		req := kmsg.NewPtrFetchRequest()
		s.forget(req, w)
		for _, ft := range req.ForgottenTopics {
			if ft.TopicID != id {
				t.Fatalf("forgotten topic %v", ft.TopicID)
			}
			forgotten = append(forgotten, ft.Partitions...)
		}
		slices.Sort(sent)
		slices.Sort(forgotten)
		return sent, forgotten
	}
	ok := &kmsg.FetchResponse{SessionID: 42}
	steps := []struct {
		name      string
		want      map[int32]int64
		resp      *kmsg.FetchResponse
		sent      []int32
		forgotten []int32
		id, epoch int32 // after the answer
	}{
		{"first fetch is full", map[int32]int64{0: 5, 1: 5, 2: 5}, ok, []int32{0, 1, 2}, nil, 42, 1},
		{"idle: nothing carried", map[int32]int64{0: 5, 1: 5, 2: 5}, ok, nil, nil, 42, 2},
		{"one moved", map[int32]int64{0: 5, 1: 9, 2: 5}, ok, []int32{1}, nil, 42, 3},
		{"one left out, one new", map[int32]int64{0: 5, 1: 9, 3: 0}, ok, []int32{3}, []int32{2}, 42, 4},
		{"stale epoch: the next is full", map[int32]int64{0: 5, 1: 9, 3: 0}, &kmsg.FetchResponse{ErrorCode: codeInvalidFetchSessionEpoch}, nil, nil, 42, 0},
		{"full, naming the old session", map[int32]int64{0: 5, 1: 9, 3: 0}, &kmsg.FetchResponse{SessionID: 43}, []int32{0, 1, 3}, nil, 43, 1},
		{"session gone: full with none", map[int32]int64{0: 5}, &kmsg.FetchResponse{ErrorCode: codeFetchSessionIDNotFound}, nil, []int32{1, 3}, 0, 0},
		{"no slot on the leader: full fetches", map[int32]int64{0: 5}, &kmsg.FetchResponse{}, []int32{0}, nil, 0, 0},
	}
	var s fetchSession
	for _, st := range steps {
		w := want(st.want)
		sent, forgotten := carried(&s, w)
		if !slices.Equal(sent, st.sent) || !slices.Equal(forgotten, st.forgotten) {
			t.Fatalf("%s: carried %v forgot %v, want %v and %v", st.name, sent, forgotten, st.sent, st.forgotten)
		}
		s.answered(st.resp, w)
		if s.id != st.id || s.epoch != st.epoch {
			t.Fatalf("%s: session %d epoch %d, want %d %d", st.name, s.id, s.epoch, st.id, st.epoch)
		}
	}
}
