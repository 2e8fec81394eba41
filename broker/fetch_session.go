package broker

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/zkafka/zkafka/kproto"
)

// Fetch sessions (KIP-227), as Kafka 3.7's FetchSession.scala.
//
// A client opens a session with a full fetch of session id 0 and epoch 0;
// the answer carries the session id, and the broker remembers every
// partition's fetch fields and what it last answered (high watermark, log
// start). The client then sends (id, epoch 1, 2, ...) with only the
// partitions whose fetch fields changed plus forgotten_topics_data, and the
// answer carries only the partitions with something new: records, a moved
// high watermark or log start, an error, a diverging epoch. Epoch -1
// (FINAL_EPOCH) closes a session (or asks for none: sessionless fetches).
//
// The cache holds at most max.incremental.fetch.session.cache.slots
// sessions. When full, a new session takes the slot of one unused for more
// than sessionEvictionAge; otherwise of the least valuable evictable one,
// ordered by (privileged, size): followers' sessions are privileged, and
// a session younger than sessionEvictionAge can be evicted only by a
// privileged newcomer and only if it is unprivileged. Kafka keeps sorted
// indexes for that choice; here it is a scan, made only when the cache is
// full and a session is created.

// sessionEvictionAge is Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS.
const sessionEvictionAge = 120 * time.Second

// codeFetchSessionTopicIDError is FETCH_SESSION_TOPIC_ID_ERROR: a session
// opened with topic ids (v13+) used without them, or the reverse.
const codeFetchSessionTopicIDError kproto.ErrorCode = 106

// sessionKey names a partition in a session: by topic id (v13+) or name.
type sessionKey struct {
	id        [16]byte
	topic     string
	partition int32
}

// sessionPartition is what a session remembers of one partition.
type sessionPartition struct {
	key                           sessionKey
	fetchOffset, fetcherLogStart  int64
	maxBytes                      int32
	leaderEpoch, lastFetchedEpoch int32
	// hw and logStart are what the last answer carried; -1 until the
	// partition is first answered, so that it is always answered then.
	hw, logStart int64
	// sentRecords: the answer being recorded carries records of it
	// (rotateLocked moves it to the end).
	sentRecords bool
}

// fetchSession is one client's session.
type fetchSession struct {
	id         int32
	privileged bool // a follower's
	topicIDs   bool // opened at v13+
	created    time.Time

	// mu guards the fields below; the cache's mu is taken first.
	mu       sync.Mutex
	epoch    int32 // the epoch the next request must carry
	lastUsed time.Time
	// parts is in the order they are fetched; index maps keys to it.
	parts []sessionPartition
	index map[sessionKey]int
	moved []sessionPartition // rotateLocked's scratch
}

// fetchSessionCache is the broker's sessions.
type fetchSessionCache struct {
	mu       sync.Mutex
	slots    int
	sessions map[int32]*fetchSession
	newID    func() int32
}

// noSessions stands in for a broker built without a cache (unit tests).
var noSessions = newFetchSessionCache(0)

func newFetchSessionCache(slots int32) *fetchSessionCache {
	return &fetchSessionCache{slots: int(slots), sessions: map[int32]*fetchSession{},
		newID: func() int32 { return rand.Int32() }}
}

// nextEpoch is the epoch after e (wrapping to 1, never 0 or -1).
func nextEpoch(e int32) int32 {
	if e < 0 || e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// open resolves the session of req at now: s is nil for a sessionless
// fetch (no session wanted, none available, v0-6), full tells a full
// answer (every requested partition) from an incremental one (s's
// partitions with news), and code is a session-level error.
func (c *fetchSessionCache) open(req *kproto.FetchRequest, now time.Time) (s *fetchSession, full bool, code kproto.ErrorCode) {
	if req.Version < 7 {
		return nil, true, kproto.CodeNone
	}
	if c == nil {
		c = noSessions
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if req.SessionEpoch == 0 || req.SessionEpoch == -1 {
		if req.SessionID != 0 {
			delete(c.sessions, req.SessionID) // a full fetch closes the session it names
		}
		if req.SessionEpoch == -1 {
			return nil, true, kproto.CodeNone
		}
		return c.createLocked(req, now), true, kproto.CodeNone
	}
	s = c.sessions[req.SessionID]
	if s == nil {
		return nil, false, kproto.CodeFetchSessionIDNotFound
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.epoch != req.SessionEpoch:
		return nil, false, kproto.CodeInvalidFetchSessionEpoch
	case s.topicIDs != (req.Version >= 13):
		return nil, false, codeFetchSessionTopicIDError
	}
	s.updateLocked(req)
	if len(s.parts) == 0 {
		delete(c.sessions, s.id)
		return nil, true, kproto.CodeNone
	}
	s.lastUsed = now
	s.epoch = nextEpoch(s.epoch)
	return s, false, kproto.CodeNone
}

// createLocked makes a session of req's partitions if a slot is free or
// can be freed; nil otherwise.
func (c *fetchSessionCache) createLocked(req *kproto.FetchRequest, now time.Time) *fetchSession {
	privileged := req.ReplicaID >= 0
	size := 0
	for i := range req.Topics {
		size += len(req.Topics[i].Partitions)
	}
	if len(c.sessions) >= c.slots && !c.evictLocked(privileged, size, now) {
		return nil
	}
	id := c.newID()
	for id <= 0 || c.sessions[id] != nil {
		id = c.newID()
	}
	s := &fetchSession{id: id, privileged: privileged, topicIDs: req.Version >= 13, created: now,
		epoch: 1, lastUsed: now, index: make(map[sessionKey]int, size), parts: make([]sessionPartition, 0, size)}
	s.updateLocked(req)
	c.sessions[id] = s
	return s
}

// evictLocked frees a slot for a new session (privileged, of size
// partitions), reporting whether it did.
func (c *fetchSessionCache) evictLocked(privileged bool, size int, now time.Time) bool {
	var lru, least *fetchSession
	for _, s := range c.sessions {
		if lru == nil || s.lastUsed.Before(lru.lastUsed) {
			lru = s
		}
		old := now.Sub(s.created) > sessionEvictionAge
		if !old && (!privileged || s.privileged) {
			continue
		}
		if least == nil || s.lessValuable(least) {
			least = s
		}
	}
	switch {
	case lru != nil && now.Sub(lru.lastUsed) > sessionEvictionAge:
		delete(c.sessions, lru.id)
		return true
	case least != nil && (privileged && !least.privileged || privileged == least.privileged && size > len(least.parts)):
		delete(c.sessions, least.id)
		return true
	}
	return false
}

// lessValuable orders sessions as Kafka's EvictableKey: unprivileged
// first, then smaller, then lower id.
func (s *fetchSession) lessValuable(o *fetchSession) bool {
	if s.privileged != o.privileged {
		return !s.privileged
	}
	if len(s.parts) != len(o.parts) {
		return len(s.parts) < len(o.parts)
	}
	return s.id < o.id
}

// keyOf is a requested partition's key in a session.
func (s *fetchSession) keyOf(name string, id [16]byte, partition int32) sessionKey {
	if s.topicIDs {
		return sessionKey{id: id, partition: partition}
	}
	return sessionKey{topic: name, partition: partition}
}

// updateLocked adds or updates req's partitions and drops its forgotten
// ones.
func (s *fetchSession) updateLocked(req *kproto.FetchRequest) {
	for i := range req.Forgotten {
		f := &req.Forgotten[i]
		for _, p := range f.Partitions {
			s.removeLocked(s.keyOf(f.Topic, f.TopicID, p))
		}
	}
	for i := range req.Topics {
		t := &req.Topics[i]
		for j := range t.Partitions {
			rp := &t.Partitions[j]
			k := s.keyOf(t.Topic, t.TopicID, rp.Partition)
			at, ok := s.index[k]
			if !ok {
				at = len(s.parts)
				s.index[k] = at
				s.parts = append(s.parts, sessionPartition{key: k, hw: -1, logStart: -1})
			}
			cp := &s.parts[at]
			cp.fetchOffset, cp.fetcherLogStart, cp.maxBytes = rp.FetchOffset, rp.LogStartOffset, rp.PartitionMaxBytes
			cp.leaderEpoch, cp.lastFetchedEpoch = rp.CurrentLeaderEpoch, rp.LastFetchedEpoch
		}
	}
}

func (s *fetchSession) removeLocked(k sessionKey) {
	at, ok := s.index[k]
	if !ok {
		return
	}
	delete(s.index, k)
	copy(s.parts[at:], s.parts[at+1:])
	s.parts = s.parts[:len(s.parts)-1]
	for i := at; i < len(s.parts); i++ {
		s.index[s.parts[i].key] = i
	}
}

// fillLocked makes dst the request an incremental fetch of req stands
// for: req's top-level fields with every partition of the session, in
// session order (consecutive partitions of a topic grouped, as Kafka's
// FetchResponse.toMessage groups them). dst's slices are reused.
func (s *fetchSession) fillLocked(dst, req *kproto.FetchRequest) {
	topics, forgotten := dst.Topics[:0], dst.Forgotten[:0]
	*dst = *req
	dst.Forgotten = forgotten
	for i := range s.parts {
		cp := &s.parts[i]
		n := len(topics)
		if n == 0 || topics[n-1].TopicID != cp.key.id || topics[n-1].Topic != cp.key.topic {
			if n < cap(topics) {
				topics = topics[:n+1]
				topics[n].Partitions = topics[n].Partitions[:0]
			} else {
				topics = append(topics, kproto.FetchTopic{})
			}
			t := &topics[n]
			t.Topic, t.TopicID, t.Tags = cp.key.topic, cp.key.id, nil
			n++
		}
		t := &topics[n-1]
		t.Partitions = append(t.Partitions, kproto.FetchPartition{Partition: cp.key.partition,
			CurrentLeaderEpoch: cp.leaderEpoch, FetchOffset: cp.fetchOffset, LastFetchedEpoch: cp.lastFetchedEpoch,
			LogStartOffset: cp.fetcherLogStart, PartitionMaxBytes: cp.maxBytes})
	}
	dst.Topics = topics
}

// answerLocked records what the answer carries for a session partition
// and reports whether an incremental answer must carry it (Kafka's
// CachedPartition.maybeUpdateResponseData): records, a moved high
// watermark or log start, a preferred replica, an error, tags (a
// diverging epoch, the current leader). A partition not in the session
// is always answered.
func (s *fetchSession) answerLocked(k sessionKey, r *kproto.FetchPartitionResponse, records int64) bool {
	at, ok := s.index[k]
	if !ok {
		return true
	}
	cp := &s.parts[at]
	cp.sentRecords = records > 0
	must := records > 0 || r.PreferredReadReplica >= 0 || r.Tags != nil
	if cp.hw != r.HighWatermark {
		must, cp.hw = true, r.HighWatermark
	}
	if cp.logStart != r.LogStartOffset {
		must, cp.logStart = true, r.LogStartOffset
	}
	if r.ErrorCode != kproto.CodeNone {
		must, cp.hw = true, -1 // answered again once the error is gone
	}
	return must
}

// rotateLocked moves the partitions just answered with records to the
// end of the session, keeping the order otherwise, so that the next fetch
// reads the others first and response limits do not starve the last
// partitions (Kafka's IncrementalFetchContext does the same).
func (s *fetchSession) rotateLocked() {
	s.moved = s.moved[:0]
	first := -1
	keep := 0
	for i := range s.parts {
		cp := s.parts[i]
		if cp.sentRecords {
			cp.sentRecords = false
			s.moved = append(s.moved, cp)
			if first < 0 {
				first = i
			}
			continue
		}
		s.parts[keep] = cp
		keep++
	}
	if first < 0 {
		return
	}
	copy(s.parts[keep:], s.moved)
	for i := first; i < len(s.parts); i++ {
		s.index[s.parts[i].key] = i
	}
}

// len is the number of sessions.
func (c *fetchSessionCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions)
}

// FetchSessions reports the sessions in the broker's fetch session cache
// and the partitions they hold, as Kafka's FetchSessionCache gauges
// NumIncrementalFetchSessions and NumIncrementalFetchPartitionsCached.
func (b *Broker) FetchSessions() (sessions, partitions int) {
	c := b.fetchSessions
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sessions {
		s.mu.Lock()
		partitions += len(s.parts)
		s.mu.Unlock()
	}
	return len(c.sessions), partitions
}

// FollowerFetches reports how many Fetch requests this broker's follower
// fetchers sent and how many partitions they carried in all (in fetch
// sessions, a partition with no change is not carried).
func (b *Broker) FollowerFetches() (fetches, partitions int64) {
	if b.repl.fetchers == nil {
		return 0, 0
	}
	return b.repl.fetchers.Stats()
}
