package replica

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Position is where a follower partition's next fetch starts: what the
// fetcher puts in the Fetch request (v12+ fields included).
type Position struct {
	TopicID     [16]byte
	LeaderEpoch int32 // the leader epoch followed (current_leader_epoch)
	LEO         int64 // fetch_offset
	LastEpoch   int32 // last_fetched_epoch: the epoch of the last batch
	LogStart    int64 // log_start_offset
	HW          int64
}

// ErrStale is a Local's answer when it no longer follows the leader in
// the epoch a fetch was made in: the fetched data is dropped.
var ErrStale = errors.New("replica: no longer a follower in that leader epoch")

// Local is a follower partition, as its fetcher sees it. Every method
// that changes the log takes the leader epoch the fetch was built in and
// returns ErrStale when the partition has since become a leader or
// follows a newer epoch, so that a fetch in flight during a leadership
// change cannot touch a leader's log.
type Local interface {
	// Position reports where to fetch; ok is false when the partition no
	// longer follows.
	Position() (pos Position, ok bool)
	// Append appends the leader's batches at their offsets and takes the
	// high watermark min(leaderHW, log end).
	Append(epoch int32, batches []byte, leaderHW, leaderStart int64) error
	// Truncate cuts the log to offset (keeping what is below it).
	Truncate(epoch int32, offset int64) error
	// Reset empties the log and restarts it at offset.
	Reset(epoch int32, offset int64) error
	// Epochs is the partition's leader epoch cache.
	Epochs() *EpochCache
}

// FetcherConfig is the fetchers' part of the broker's configuration.
type FetcherConfig struct {
	Self             int32         // this broker's id: the fetches' replica_id
	WaitMax          time.Duration // replica.fetch.wait.max.ms
	Backoff          time.Duration // replica.fetch.backoff.ms
	MaxBytes         int32         // replica.fetch.max.bytes, per partition
	ResponseMaxBytes int32         // replica.fetch.response.max.bytes
	// Addr is where broker id is reached on the inter-broker listener.
	Addr func(id int32) (string, bool)
	// ClientOpts are added to the fetchers' kgo clients (TLS).
	ClientOpts []kgo.Opt
	// Go starts a tracked goroutine (false once the broker shuts down).
	Go  func(name string, fn func()) bool
	Log *slog.Logger
	// Throttle is follower.replication.throttled.rate and Throttled the
	// partitions it applies to (follower.replication.throttled.replicas;
	// nil: none): a throttled partition that has not caught up with the
	// leader's high watermark is left out of fetches while the rate of
	// the throttled partitions' fetched bytes is over the bound (Kafka's
	// ReplicaFetcherThread.shouldFollowerThrottle).
	Throttle  *Quota
	Throttled func(TopicPartition) bool
}

// Fetchers are the follower fetchers: one goroutine per leader broker,
// each fetching every partition this broker follows on that leader
// (Kafka's ReplicaFetcherManager with num.replica.fetchers=1).
type Fetchers struct {
	cfg    FetcherConfig
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	// byLeader: the fetcher of each leader that has partitions or had.
	byLeader map[int32]*fetcher
	// leaderOf: which fetcher holds each followed partition.
	leaderOf map[TopicPartition]int32
	stopped  bool
	// stats counts the fetches sent and the partitions they carried
	// (fetch_session.go).
	stats fetchStats
}

// NewFetchers returns fetchers that run until Stop.
func NewFetchers(cfg FetcherConfig) *Fetchers {
	ctx, cancel := context.WithCancel(context.Background())
	return &Fetchers{cfg: cfg, ctx: ctx, cancel: cancel, byLeader: map[int32]*fetcher{}, leaderOf: map[TopicPartition]int32{}}
}

// Follow makes tp fetched from leader (moving it off another leader's
// fetcher). A partition already followed on that leader is replaced.
func (fs *Fetchers) Follow(leader int32, tp TopicPartition, l Local) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.stopped {
		return
	}
	if old, ok := fs.leaderOf[tp]; ok && old != leader {
		fs.byLeader[old].remove(tp)
	}
	f := fs.byLeader[leader]
	if f == nil {
		f = &fetcher{fs: fs, leader: leader, parts: map[TopicPartition]*fetchEntry{}, wake: make(chan struct{}, 1)}
		if !fs.cfg.Go("replica-fetcher", f.run) {
			return
		}
		fs.byLeader[leader] = f
	}
	fs.leaderOf[tp] = leader
	f.add(tp, l)
}

// Unfollow stops fetching tp.
func (fs *Fetchers) Unfollow(tp TopicPartition) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if old, ok := fs.leaderOf[tp]; ok {
		fs.byLeader[old].remove(tp)
		delete(fs.leaderOf, tp)
	}
}

// Stop ends every fetcher (the broker's Shutdown; the goroutines are the
// broker's tracked ones and end on their own).
func (fs *Fetchers) Stop() {
	fs.mu.Lock()
	fs.stopped = true
	fs.mu.Unlock()
	fs.cancel()
}

// fetchEntry is one followed partition of a fetcher.
type fetchEntry struct {
	local Local
	// delayUntil: the partition is left out of fetches until then
	// (after an error, replica.fetch.backoff.ms).
	delayUntil time.Time
	// quick counts the short pauses in a row (pause); an answer applied
	// resets it.
	quick int
	// inSync: the last answer applied left the partition at the leader's
	// high watermark (Kafka's PartitionFetchState.isReplicaInSync); a
	// partition in sync is never throttled.
	inSync bool
}

// fetcher fetches from one leader broker.
type fetcher struct {
	fs     *Fetchers
	leader int32
	mu     sync.Mutex
	parts  map[TopicPartition]*fetchEntry
	wake   chan struct{} // a partition was added
	// interrupt cancels the request in flight (nil: none); interrupted
	// says add did, so the error it brings is no failure.
	interrupt   context.CancelFunc
	interrupted bool

	// client is the kgo client of the leader at clientAddr (owned by run).
	client     *kgo.Client
	clientAddr string
	// sess is the fetch session with the leader (owned by run).
	sess fetchSession
}

// add fetches tp from now on. A request in flight is a long poll of up to
// replica.fetch.wait.max.ms over the other partitions: it is cut short
// (its connection closed) so that the next request, with tp, goes out at
// once. At a failover the new leader's high watermark, and every
// acks=all write, waits for this follower's first fetch in the new epoch.
func (f *fetcher) add(tp TopicPartition, l Local) {
	f.mu.Lock()
	f.parts[tp] = &fetchEntry{local: l}
	if f.interrupt != nil {
		f.interrupt()
		f.interrupt, f.interrupted = nil, true
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *fetcher) remove(tp TopicPartition) {
	f.mu.Lock()
	delete(f.parts, tp)
	f.mu.Unlock()
}

// run is the fetcher's loop: build a fetch of the partitions not backing
// off, send it, apply the answer; sleep when there is nothing to fetch.
func (f *fetcher) run() {
	defer func() {
		if f.client != nil {
			f.client.Close()
		}
	}()
	for f.fs.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(f.fs.ctx, f.fs.cfg.WaitMax+30*time.Second)
		req, locals, next := f.build(time.Now(), cancel)
		if req == nil {
			cancel()
			f.idle(next)
			continue
		}
		resp, err := f.send(ctx, req)
		cancel()
		f.fs.stats.count(req)
		f.mu.Lock()
		interrupted := f.interrupted
		f.interrupt, f.interrupted = nil, false
		f.mu.Unlock()
		if err != nil && interrupted {
			f.closeClient() // the cut request's answer may still come on it
			// Whether the leader took the cut request's epoch is unknown:
			// a full fetch naming the session replaces it.
			f.sess.reset(f.sess.id)
			continue
		}
		if err != nil {
			f.sess.reset(f.sess.id)
			if f.fs.ctx.Err() == nil {
				f.fs.cfg.Log.Debug("replica fetch failed", "leader", f.leader, "err", err)
				f.closeClient()
				f.sleep(f.fs.cfg.Backoff)
			}
			continue
		}
		f.apply(resp, locals)
	}
}

// idle waits for a new partition, for the first backoff to end (next,
// zero: none), or for Stop.
func (f *fetcher) idle(next time.Time) {
	d := time.Hour
	if !next.IsZero() {
		d = max(time.Until(next), time.Millisecond)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-f.wake:
	case <-t.C:
	case <-f.fs.ctx.Done():
	}
}

func (f *fetcher) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-f.fs.ctx.Done():
	}
}

// fetched is what a request asked for one partition.
type fetched struct {
	tp    TopicPartition
	local Local
	pos   Position
	entry *fetchEntry // the entry the request was built from
}

// build makes the next Fetch (nil when no partition is ready; next is
// then when the first backoff ends).
func (f *fetcher) build(now time.Time, interrupt context.CancelFunc) (*kmsg.FetchRequest, map[[16]byte]map[int32]fetched, time.Time) {
	cfg := &f.fs.cfg
	f.mu.Lock()
	defer f.mu.Unlock()
	// From here on an add cuts the request (add) — an incremental one only:
	// a cut full fetch may have made a session on the leader whose id never
	// reached us, which would stay there unused until evicted.
	f.interrupt, f.interrupted = nil, false
	if !f.sess.full() {
		f.interrupt = interrupt
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = cfg.Self
	req.MaxWaitMillis = int32(cfg.WaitMax / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = cfg.ResponseMaxBytes
	req.SessionID, req.SessionEpoch = f.sess.id, f.sess.epoch // fetch_session.go
	locals := map[[16]byte]map[int32]fetched{}
	topics := map[[16]byte]int{}
	var next time.Time
	for tp, e := range f.parts {
		if now.Before(e.delayUntil) {
			if next.IsZero() || e.delayUntil.Before(next) {
				next = e.delayUntil
			}
			continue
		}
		pos, ok := e.local.Position()
		if !ok {
			continue
		}
		if f.throttled(tp, e, now) {
			if d := now.Add(cfg.Backoff); next.IsZero() || d.Before(next) {
				next = d // look again after a backoff, as Kafka's empty fetch
			}
			continue
		}
		if locals[pos.TopicID] == nil {
			locals[pos.TopicID] = map[int32]fetched{}
		}
		locals[pos.TopicID][tp.Partition] = fetched{tp: tp, local: e.local, pos: pos, entry: e}
		if !f.sess.changed(tp, pos) {
			continue // the leader's session has it as it is
		}
		i, ok := topics[pos.TopicID]
		if !ok {
			i = len(req.Topics)
			topics[pos.TopicID] = i
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = tp.Topic, pos.TopicID
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition, p.CurrentLeaderEpoch, p.FetchOffset = tp.Partition, pos.LeaderEpoch, pos.LEO
		p.LastFetchedEpoch, p.LogStartOffset, p.PartitionMaxBytes = pos.LastEpoch, pos.LogStart, cfg.MaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	if len(locals) == 0 {
		return nil, nil, next
	}
	f.sess.forget(req, locals)
	return req, locals, next
}

// send sends req to the leader's inter-broker listener.
func (f *fetcher) send(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	addr, ok := f.fs.cfg.Addr(f.leader)
	if !ok {
		return nil, errors.New("leader not registered")
	}
	if f.client == nil || f.clientAddr != addr {
		f.closeClient()
		opts := append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID("zkafka-replica-fetcher"),
			kgo.DialTimeout(5 * time.Second), kgo.RequestRetries(0)}, f.fs.cfg.ClientOpts...)
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return nil, err
		}
		f.client, f.clientAddr = cl, addr
	}
	return f.client.SeedBrokers()[0].Request(ctx, req)
}

func (f *fetcher) closeClient() {
	if f.client != nil {
		f.client.Close()
		f.client, f.clientAddr = nil, ""
	}
}

// apply hands each partition's answer to its Local.
func (f *fetcher) apply(kresp kmsg.Response, locals map[[16]byte]map[int32]fetched) {
	resp, ok := kresp.(*kmsg.FetchResponse)
	if !ok {
		return
	}
	if !f.sess.answered(resp, locals) {
		if resp.ErrorCode != codeFetchSessionIDNotFound && resp.ErrorCode != codeInvalidFetchSessionEpoch &&
			resp.ErrorCode != codeFetchSessionTopicIDError {
			f.backoffAll(locals)
		}
		return
	}
	for _, rt := range resp.Topics {
		byPart := locals[rt.TopicID]
		for i := range rt.Partitions {
			rp := &rt.Partitions[i]
			fd, ok := byPart[rp.Partition]
			if !ok {
				continue
			}
			f.recordThrottled(fd, rp)
			if err := f.applyPartition(fd, rp); err != nil {
				// Leadership changes bring stale answers and partition
				// errors (logged at debug level); others are worth a warning.
				if !errors.Is(err, ErrStale) && !errors.Is(err, errBackoff) && !errors.Is(err, errLeaderBehind) {
					f.fs.cfg.Log.Warn("replica fetch", "topic", fd.tp.Topic, "partition", fd.tp.Partition,
						"leader", f.leader, "err", err)
				}
				f.backoff(fd, f.pause(fd, err))
				continue
			}
			pos, _ := fd.local.Position()
			f.mu.Lock()
			fd.entry.quick = 0
			fd.entry.inSync = rp.HighWatermark <= pos.LEO
			f.mu.Unlock()
		}
	}
}

// Kafka error codes the fetcher acts on.
const (
	codeOffsetOutOfRange   = 1
	codeNotLeader          = 6
	codeUnknownLeaderEpoch = 75
)

// retrySoon is the pause before fetching again a partition whose answer
// was stale (its leadership changed meanwhile) or whose leader has not
// taken the epoch this follower was told of yet, up to quickRetries
// times in a row. At a failover the controller tells the new leader and
// its followers at the same time, so a follower often asks before the
// leader has become one; waiting the whole replica.fetch.backoff.ms
// (1 s) there, as Kafka does, holds the new leader's high watermark —
// and every acks=all write — for that second.
const (
	retrySoon    = 20 * time.Millisecond
	quickRetries = 10
)

// errLeaderBehind marks UNKNOWN_LEADER_EPOCH and NOT_LEADER_OR_FOLLOWER
// from the broker this follower was told leads: it has not applied its
// LeaderAndIsr yet (or leads no more, and this follower will be told).
var errLeaderBehind = errors.New("replica: the leader has not taken this epoch yet")

// pause is how long fd's partition waits after err: retrySoon for a
// stale answer or a leader behind (quickRetries times in a row), else
// replica.fetch.backoff.ms.
func (f *fetcher) pause(fd fetched, err error) time.Duration {
	d := f.fs.cfg.Backoff
	if !errors.Is(err, ErrStale) && !errors.Is(err, errLeaderBehind) {
		return d
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fd.entry.quick < quickRetries {
		fd.entry.quick++
		return min(d, retrySoon)
	}
	return d
}

// errBackoff marks a partition error answered by backing off.
var errBackoff = errors.New("replica: partition error; backing off")

func (f *fetcher) applyPartition(fd fetched, rp *kmsg.FetchResponseTopicPartition) error {
	l, epoch := fd.local, fd.pos.LeaderEpoch
	switch rp.ErrorCode {
	case 0:
	case codeOffsetOutOfRange:
		return f.outOfRange(fd)
	case codeUnknownLeaderEpoch, codeNotLeader:
		return errLeaderBehind
	default:
		// NOT_LEADER_OR_FOLLOWER, FENCED/UNKNOWN_LEADER_EPOCH, ...: the
		// state watch brings the new leadership; wait a backoff.
		f.fs.cfg.Log.Debug("replica fetch partition error", "topic", fd.tp.Topic, "partition", fd.tp.Partition, "code", rp.ErrorCode)
		return errBackoff
	}
	if de := rp.DivergingEpoch; de.EndOffset >= 0 || de.Epoch >= 0 {
		off, _ := TruncationOffset(l.Epochs(), de.Epoch, de.EndOffset, fd.pos.LEO, fd.pos.HW)
		f.fs.cfg.Log.Info("follower log diverged from the leader's; truncating", "topic", fd.tp.Topic,
			"partition", fd.tp.Partition, "diverging_epoch", de.Epoch, "leader_end_offset", de.EndOffset, "truncate_to", off)
		return l.Truncate(epoch, off)
	}
	return l.Append(epoch, rp.RecordBatches, rp.HighWatermark, rp.LogStartOffset)
}

// outOfRange asks the leader for its log start and end and truncates or
// resets as OutOfRange says.
func (f *fetcher) outOfRange(fd fetched) error {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = f.fs.cfg.Self
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = fd.tp.Topic
	for _, ts := range []int64{-2, -1} {
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Partition, p.CurrentLeaderEpoch, p.Timestamp = fd.tp.Partition, fd.pos.LeaderEpoch, ts
		t.Partitions = append(t.Partitions, p)
	}
	req.Topics = append(req.Topics, t)
	ctx, cancel := context.WithTimeout(f.fs.ctx, 30*time.Second)
	defer cancel()
	kresp, err := f.send(ctx, req)
	if err != nil {
		return err
	}
	resp := kresp.(*kmsg.ListOffsetsResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		return errors.New("replica: short ListOffsets answer")
	}
	ps := resp.Topics[0].Partitions
	if ps[0].ErrorCode != 0 || ps[1].ErrorCode != 0 {
		return errBackoff
	}
	truncateTo, startAt, _ := OutOfRange(fd.pos.LEO, ps[0].Offset, ps[1].Offset)
	log := f.fs.cfg.Log.With("topic", fd.tp.Topic, "partition", fd.tp.Partition, "log_end_offset", fd.pos.LEO,
		"leader_log_start", ps[0].Offset, "leader_log_end", ps[1].Offset)
	switch {
	case truncateTo >= 0:
		log.Info("follower ahead of the leader's log end; truncating")
		return fd.local.Truncate(fd.pos.LeaderEpoch, truncateTo)
	case startAt >= 0:
		log.Info("follower behind the leader's log start; emptying its log to start there")
		return fd.local.Reset(fd.pos.LeaderEpoch, startAt)
	}
	return errBackoff
}

// backoff leaves fd's partition out of fetches for d, unless the
// partition was followed anew since the request was built (a new leader
// or epoch: Follow replaced its entry) or its epoch moved on: the error
// was the old epoch's (FENCED_LEADER_EPOCH to a request in flight when
// the leader took a new epoch, say), and the new one fetches at once, as
// Kafka's fetcher ignores an answer for a partition whose fetch state
// changed meanwhile.
func (f *fetcher) backoff(fd fetched, d time.Duration) {
	pos, ok := fd.local.Position()
	f.mu.Lock()
	if e := f.parts[fd.tp]; e != nil && e == fd.entry && ok && pos.LeaderEpoch == fd.pos.LeaderEpoch {
		e.delayUntil = time.Now().Add(d)
	}
	f.mu.Unlock()
}

func (f *fetcher) backoffAll(locals map[[16]byte]map[int32]fetched) {
	for _, m := range locals {
		for _, fd := range m {
			f.backoff(fd, f.fs.cfg.Backoff)
		}
	}
}

// throttled reports whether e's partition waits for the follower
// throttle. f.mu must be held.
func (f *fetcher) throttled(tp TopicPartition, e *fetchEntry, now time.Time) bool {
	cfg := &f.fs.cfg
	return cfg.Throttled != nil && !e.inSync && cfg.Throttled(tp) && cfg.Throttle.Exceeded(now)
}

// recordThrottled counts a throttled partition's fetched bytes, in sync or
// not (Kafka: all throttled traffic counts against the quota).
func (f *fetcher) recordThrottled(fd fetched, rp *kmsg.FetchResponseTopicPartition) {
	if cfg := &f.fs.cfg; cfg.Throttled != nil && len(rp.RecordBatches) > 0 && cfg.Throttled(fd.tp) {
		cfg.Throttle.Record(int64(len(rp.RecordBatches)), time.Now())
	}
}
