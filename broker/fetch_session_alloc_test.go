package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// TestIncrementalFetchAllocs: a fetch in an incremental session (the
// session's partition read with data, the answer recorded in the
// session) allocates no more than a sessionless one.
func TestIncrementalFetchAllocs(t *testing.T) {
	b, _ := newTestBroker(t)
	b.fetchSessions = newFetchSessionCache(10)
	c := allocConn(b)
	phdr := kproto.RequestHeader{APIKey: kproto.KeyProduce, APIVersion: 7, CorrelationID: 1}
	if resp, err := handleProduce(c, &phdr, produceRequestBody(7, testBatch(1000))); err != nil || resp == nil {
		t.Fatal(err)
	} else {
		resp.release()
	}
	hdr := kproto.RequestHeader{APIKey: kproto.KeyFetch, APIVersion: 12, CorrelationID: 1}
	full := kmsg.NewPtrFetchRequest()
	full.Version = 12
	if err := full.ReadFrom(fetchRequestBody(12, 0)); err != nil {
		t.Fatal(err)
	}
	full.Version, full.SessionID, full.SessionEpoch = 12, 0, 0
	resp, err := handleFetch(c, &hdr, full.AppendTo(nil))
	if err != nil || resp == nil {
		t.Fatal(err)
	}
	resp.release()
	id, _ := b.FetchSessions()
	if id != 1 {
		t.Fatalf("%d sessions", id)
	}
	var session int32
	for sid := range b.fetchSessions.sessions {
		session = sid
	}
	const runs = 200
	bodies := make([][]byte, runs+2)
	for i := range bodies {
		inc := kmsg.NewPtrFetchRequest()
		inc.Version, inc.ReplicaID, inc.MaxBytes, inc.MinBytes = 12, -1, 1<<20, 1
		inc.SessionID, inc.SessionEpoch = session, int32(i+1)
		bodies[i] = inc.AppendTo(nil)
	}
	n := 0
	run := func() {
		resp, err := handleFetch(c, &hdr, bodies[n])
		n++
		if err != nil || resp == nil || len(resp.ranges) != 1 {
			t.Fatalf("incremental fetch %d: %v (%d ranges)", n, err, len(resp.ranges))
		}
		resp.release()
	}
	run()
	if allocs := testing.AllocsPerRun(runs, run); allocs > maxFetchAllocs {
		t.Errorf("incremental fetch: %.1f allocs per request, want at most %d", allocs, maxFetchAllocs)
	}
}

// TestDuplicateIncrementalFetch: when the session's next fetch is
// accepted while one is being served (a retried request), the first is
// answered INVALID_FETCH_SESSION_EPOCH with no partitions, as Kafka's
// IncrementalFetchContext answers it.
func TestDuplicateIncrementalFetch(t *testing.T) {
	b, _ := newTestBroker(t)
	b.fetchSessions = newFetchSessionCache(10)
	c := allocConn(b)
	full := &kproto.FetchRequest{}
	if err := full.Decode(12, fetchRequestBody(12, 0)); err != nil {
		t.Fatal(err)
	}
	full.SessionEpoch = 0
	var head kproto.FetchResponseHead
	if _, ok := c.openFetchSession(full, &head); !ok || head.SessionID == 0 {
		t.Fatalf("no session: %+v", head)
	}
	c.gatherFetch(full)
	c.answerFetchSession(full, &head)
	c.fetch.releaseRanges()
	inc := &kproto.FetchRequest{Version: 12, ReplicaID: -1, MaxBytes: 1 << 20, SessionID: head.SessionID, SessionEpoch: 1}
	head = kproto.FetchResponseHead{}
	req, ok := c.openFetchSession(inc, &head)
	if !ok || len(req.Topics) != 1 {
		t.Fatalf("incremental fetch refused: %+v", head)
	}
	c.gatherFetch(req)
	dup := *inc // the client's next fetch, sent before this one was answered
	dup.SessionEpoch = 2
	if _, _, code := b.fetchSessions.open(&dup, time.Now()); code != kproto.CodeNone {
		t.Fatalf("the duplicate: %v", code)
	}
	if c.answerFetchSession(req, &head) || head.ErrorCode != kproto.CodeInvalidFetchSessionEpoch {
		t.Fatalf("answered a fetch whose session moved on: %+v", head)
	}
	resp := c.writeFetch(&kproto.RequestHeader{APIKey: kproto.KeyFetch, APIVersion: 12}, req, &head, false)
	if len(resp.ranges) != 0 || len(resp.holes) != 0 {
		t.Fatalf("error answer with %d ranges", len(resp.ranges))
	}
	resp.release()
}
