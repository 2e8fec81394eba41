package replica

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeLocal is a followed partition at a leader epoch.
type fakeLocal struct{ epoch int32 }

func (l *fakeLocal) Position() (Position, bool)               { return Position{LeaderEpoch: l.epoch}, true }
func (l *fakeLocal) Append(int32, []byte, int64, int64) error { return nil }
func (l *fakeLocal) Truncate(int32, int64) error              { return nil }
func (l *fakeLocal) Reset(int32, int64) error                 { return nil }
func (l *fakeLocal) Epochs() *EpochCache                      { return nil }

func newTestFetcher(backoff time.Duration) *fetcher {
	fs := NewFetchers(FetcherConfig{Backoff: backoff, WaitMax: time.Second})
	return &fetcher{fs: fs, parts: map[TopicPartition]*fetchEntry{}, wake: make(chan struct{}, 1)}
}

// TestFetcherPauses: after a partition error the partition waits
// replica.fetch.backoff.ms, but a leader behind the follower's epoch
// (UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER: its LeaderAndIsr not
// applied yet) or a stale answer is retried after retrySoon, quickRetries
// times in a row until an answer is applied; an error to a request built
// before the partition was followed anew (a new epoch) is no reason to
// wait at all.
func TestFetcherPauses(t *testing.T) {
	f := newTestFetcher(time.Second)
	tp := TopicPartition{Topic: "t", Partition: 0}
	l := &fakeLocal{epoch: 3}
	f.add(tp, l)
	fd := fetched{tp: tp, local: l, pos: Position{LeaderEpoch: 3}, entry: f.parts[tp]}
	if d := f.pause(fd, errBackoff); d != time.Second {
		t.Fatalf("a partition error pauses %v, want the backoff", d)
	}
	for i := range quickRetries {
		if d := f.pause(fd, errLeaderBehind); d != retrySoon {
			t.Fatalf("leader behind, retry %d: %v, want %v", i, d, retrySoon)
		}
	}
	if d := f.pause(fd, ErrStale); d != time.Second {
		t.Fatalf("after %d quick retries: %v, want the backoff", quickRetries, d)
	}
	resp := kmsg.NewPtrFetchResponse()
	rt := kmsg.NewFetchResponseTopic()
	rp := kmsg.NewFetchResponseTopicPartition()
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	f.apply(resp, map[[16]byte]map[int32]fetched{{}: {0: fd}})
	if d := f.pause(fd, errLeaderBehind); d != retrySoon {
		t.Fatalf("after an applied answer: %v, want %v again", d, retrySoon)
	}

	f.backoff(fd, time.Hour)
	if e := f.parts[tp]; e.delayUntil.IsZero() {
		t.Fatal("backoff of the current entry not applied")
	}
	l.epoch = 4
	f.add(tp, l) // followed anew in epoch 4
	f.backoff(fd, time.Hour)
	if e := f.parts[tp]; !e.delayUntil.IsZero() {
		t.Fatal("an epoch-3 request's error delayed the partition followed anew in epoch 4")
	}
	fd.entry = f.parts[tp] // the same entry, but the request's epoch is older
	f.backoff(fd, time.Hour)
	if e := f.parts[tp]; !e.delayUntil.IsZero() {
		t.Fatal("an epoch-3 request's error delayed the partition now in epoch 4")
	}
}

// TestAddCutsTheLongPoll: a partition added while a fetch is in flight
// cancels that request (its long poll over the other partitions would
// hold the new one back up to replica.fetch.wait.max.ms), and the cut is
// marked so that it is not taken for a failure.
func TestAddCutsTheLongPoll(t *testing.T) {
	f := newTestFetcher(time.Second)
	f.add(TopicPartition{Topic: "t", Partition: 0}, &fakeLocal{epoch: 1})
	f.sess.id, f.sess.epoch = 7, 1 // an incremental fetch of session 7
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if req, _, _ := f.build(time.Now(), cancel); req == nil {
		t.Fatal("nothing to fetch")
	}
	f.add(TopicPartition{Topic: "t", Partition: 1}, &fakeLocal{epoch: 1})
	select {
	case <-ctx.Done():
	default:
		t.Fatal("the request in flight was not cut")
	}
	if !f.interrupted || f.interrupt != nil {
		t.Fatalf("interrupted %v, interrupt left %v", f.interrupted, f.interrupt != nil)
	}
	req, _, _ := f.build(time.Now(), func() {})
	if n := len(req.Topics[0].Partitions); n != 2 || f.interrupted {
		t.Fatalf("next request has %d partitions (interrupted %v), want both and a fresh flag", n, f.interrupted)
	}
}

// TestAddDoesNotCutAFullFetch: a full fetch may create a session on the
// leader; cut, its id would never reach the follower and the session
// would stay there unused. An add waits for it.
func TestAddDoesNotCutAFullFetch(t *testing.T) {
	f := newTestFetcher(time.Second)
	f.add(TopicPartition{Topic: "t", Partition: 0}, &fakeLocal{epoch: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if req, _, _ := f.build(time.Now(), cancel); req == nil || req.SessionEpoch != 0 {
		t.Fatalf("want a full fetch, got %+v", req)
	}
	f.add(TopicPartition{Topic: "t", Partition: 1}, &fakeLocal{epoch: 1})
	if ctx.Err() != nil || f.interrupted {
		t.Fatal("a full fetch in flight was cut")
	}
}
