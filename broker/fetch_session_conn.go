package broker

import (
	"time"

	"github.com/zkafka/zkafka/kproto"
)

// The fetch path's side of fetch sessions (fetch_session.go): a fetch of
// an incremental session reads, and long-polls on, every partition of the
// session (a follower's fetch of it records the follower's offsets, as a
// full fetch would), and its answer leaves out the partitions with
// nothing new. The request standing for the session is rebuilt in the
// connection's scratch, reusing its slices.

// fetchSessionState is the session of the fetch a connection is serving.
type fetchSessionState struct {
	s     *fetchSession // nil: sessionless
	full  bool          // a full answer (the session was just created)
	epoch int32         // s.epoch once this fetch was accepted
	req   kproto.FetchRequest
}

// openFetchSession resolves req's session: it returns the request to
// serve (req, or the session's partitions for an incremental fetch) and
// false with head.ErrorCode set on a session error. head.SessionID is
// the session's id.
func (c *conn) openFetchSession(req *kproto.FetchRequest, head *kproto.FetchResponseHead) (*kproto.FetchRequest, bool) {
	ss := &c.fetch.session
	ss.s = nil
	s, full, code := c.b.fetchSessions.open(req, time.Now())
	if code != kproto.CodeNone {
		head.ErrorCode = code
		return req, false
	}
	if s == nil {
		return req, true
	}
	head.SessionID = s.id
	ss.s, ss.full = s, full
	s.mu.Lock()
	defer s.mu.Unlock()
	ss.epoch = s.epoch
	if full {
		return req, true
	}
	s.fillLocked(&ss.req, req)
	return &ss.req, true
}

// answerFetchSession records in the session what the answer in c.fetch
// carries and, for an incremental answer, marks the partitions it leaves
// out. If another fetch of the session came in meanwhile (a duplicate
// request), it releases the data read, sets INVALID_FETCH_SESSION_EPOCH
// in head and reports false: the answer is that error, as Kafka's.
func (c *conn) answerFetchSession(req *kproto.FetchRequest, head *kproto.FetchResponseHead) bool {
	ss := &c.fetch.session
	s := ss.s
	if s == nil {
		return true
	}
	ss.s = nil
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch != ss.epoch {
		c.fetch.releaseRanges()
		head.ErrorCode = kproto.CodeInvalidFetchSessionEpoch
		return false
	}
	for i := range req.Topics {
		rt := &req.Topics[i]
		for j := range rt.Partitions {
			fp := &c.fetch.parts[i][j]
			must := s.answerLocked(s.keyOf(rt.Topic, rt.TopicID, rt.Partitions[j].Partition), &fp.resp, fp.rng.Len)
			fp.omit = !ss.full && !must
		}
	}
	if !ss.full {
		s.rotateLocked()
	}
	return true
}

// answered is how many partitions of the request's topic i the answer
// carries.
func (fs *fetchState) answered(i, n int) int {
	if i >= len(fs.parts) {
		return n
	}
	k := 0
	for j := range fs.parts[i] {
		if !fs.parts[i][j].omit {
			k++
		}
	}
	return k
}

// answeredTopics is how many of the request's topics the answer carries.
func (fs *fetchState) answeredTopics(req *kproto.FetchRequest) int {
	k := 0
	for i := range req.Topics {
		if n := len(req.Topics[i].Partitions); n == 0 || fs.answered(i, n) > 0 {
			k++
		}
	}
	return k
}
