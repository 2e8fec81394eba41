package replica

import (
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The follower's side of a fetch session (KIP-227) with its leader. The
// first fetch is full (session id 0, epoch 0) and the leader answers with
// a session id; later fetches carry (id, epoch 1, 2, ...) and only the
// partitions whose fetch fields changed since the leader last heard of
// them, plus the partitions to forget (removed, or backing off). The
// leader answers only partitions with news, so a follower of many idle
// partitions sends and receives a few bytes per fetch. On a failed fetch
// or a session error the next fetch is full again, naming the old session
// so that the leader frees it (Kafka's FetchSessionHandler). franz-go has
// no session support for raw kmsg requests, so the state lives here.

// Session-level errors after which the next fetch is full.
const (
	codeFetchSessionIDNotFound   = 70
	codeInvalidFetchSessionEpoch = 71
	codeFetchSessionTopicIDError = 106
)

// fetchSession is a fetcher's session with its leader (owned by run).
type fetchSession struct {
	id    int32 // 0: none
	epoch int32 // the next request's epoch; 0: a full fetch
	// sent is, per partition, the fetch fields the leader's session holds.
	sent map[TopicPartition]Position
}

// full reports whether the next fetch is a full one.
func (s *fetchSession) full() bool { return s.epoch == 0 }

// changed reports whether the next fetch must carry tp at pos.
func (s *fetchSession) changed(tp TopicPartition, pos Position) bool {
	if s.full() {
		return true
	}
	old, ok := s.sent[tp]
	return !ok || old.TopicID != pos.TopicID || old.LeaderEpoch != pos.LeaderEpoch || old.LEO != pos.LEO ||
		old.LastEpoch != pos.LastEpoch || old.LogStart != pos.LogStart
}

// forget adds to req the partitions the leader's session holds that the
// fetch leaves out (want lists the ones it fetches).
func (s *fetchSession) forget(req *kmsg.FetchRequest, want map[[16]byte]map[int32]fetched) {
	if s.full() {
		return
	}
	at := map[[16]byte]int{}
	for tp, pos := range s.sent {
		if _, ok := want[pos.TopicID][tp.Partition]; ok {
			continue
		}
		i, ok := at[pos.TopicID]
		if !ok {
			i = len(req.ForgottenTopics)
			at[pos.TopicID] = i
			ft := kmsg.NewFetchRequestForgottenTopic()
			ft.Topic, ft.TopicID = tp.Topic, pos.TopicID
			req.ForgottenTopics = append(req.ForgottenTopics, ft)
		}
		req.ForgottenTopics[i].Partitions = append(req.ForgottenTopics[i].Partitions, tp.Partition)
	}
}

// answered takes the leader's answer to a fetch of the partitions in
// fetchedNow; it reports whether the answer's partitions are to be
// applied (false on a session error: the next fetch is full, at once).
func (s *fetchSession) answered(resp *kmsg.FetchResponse, fetchedNow map[[16]byte]map[int32]fetched) bool {
	switch resp.ErrorCode {
	case 0:
	case codeFetchSessionIDNotFound:
		s.reset(0)
		return false
	default: // INVALID_FETCH_SESSION_EPOCH, FETCH_SESSION_TOPIC_ID_ERROR, others
		s.reset(s.id)
		return false
	}
	if s.full() {
		s.id = resp.SessionID
		if s.id == 0 { // no session: full fetches on
			clear(s.sent)
			return true
		}
	}
	s.epoch = nextEpoch(s.epoch)
	if s.sent == nil {
		s.sent = map[TopicPartition]Position{}
	}
	clear(s.sent)
	for _, byPart := range fetchedNow {
		for _, fd := range byPart {
			s.sent[fd.tp] = fd.pos
		}
	}
	return true
}

// reset makes the next fetch full; it names session id (0: none) so that
// the leader closes it.
func (s *fetchSession) reset(id int32) {
	s.id, s.epoch = id, 0
	clear(s.sent)
}

// nextEpoch is the session epoch after e (wrapping to 1).
func nextEpoch(e int32) int32 {
	if e < 0 || e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// fetchStats counts the fetchers' Fetch requests and the partitions they
// carried: in sessions, idle partitions are not carried.
type fetchStats struct {
	fetches, partitions atomic.Int64
}

func (st *fetchStats) count(req *kmsg.FetchRequest) {
	n := 0
	for i := range req.Topics {
		n += len(req.Topics[i].Partitions)
	}
	st.fetches.Add(1)
	st.partitions.Add(int64(n))
}

// Stats reports how many Fetch requests the fetchers sent and how many
// partitions they carried in all.
func (fs *Fetchers) Stats() (fetches, partitions int64) {
	return fs.stats.fetches.Load(), fs.stats.partitions.Load()
}
