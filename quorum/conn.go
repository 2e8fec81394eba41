package quorum

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkafka/zkafka/internal/digestmd5"
	"github.com/zkafka/zkafka/internal/javahash"
	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

const (
	// maxOutstanding bounds the requests a connection has in flight, like
	// ZooKeeper's globalOutstandingLimit: the reader stops reading beyond it.
	maxOutstanding = 1000
	// maxQueuedEvents bounds the notifications waiting for a slow client;
	// beyond it the connection is closed rather than memory growing.
	maxQueuedEvents = 4096
)

// conn is one client connection. Two goroutines: the reader decodes
// requests in order and proposes writes at once (so one session's writes
// enter the log in its order); the writer answers the calls handed to it in
// request order, executing reads only after every earlier write of the
// session has applied. A read that finds nothing handed to the writer
// unanswered (queued is zero) is answered by the reader itself, with no
// hand-off (inline.go): every earlier call's reply is written by then, so
// the session's order holds. Watch notifications are queued in ev and
// written by whichever goroutine writes next.
type conn struct {
	srv *Server
	nc  net.Conn
	ip  string

	calls  chan *call
	closed chan struct{}
	once   sync.Once

	// queued counts the calls handed to the writer whose reply is not
	// written yet; the reader adds, the writer subtracts once the reply is
	// in out. While it is zero the reader answers reads itself.
	queued atomic.Int64
	// out is the connection's output. Both goroutines write replies, so
	// out's lock orders them; it is held across the socket write (only
	// this connection's two goroutines take it: notify never does).
	out struct {
		sync.Mutex
		bw      *bufio.Writer
		scratch []byte // a reply is encoded here
		evSpare []byte // the event buffer last written, for ev to reuse
	}
	// ev holds the watch notifications not written yet, framed, in the
	// order they fired. They are taken only under out's lock, so none is
	// overtaken by a reply written after it was queued. evWake (buffered 1)
	// wakes the writer for them.
	ev struct {
		sync.Mutex
		frames []byte
		n      int
	}
	evWake chan struct{}
	// life is cancelled when the connection closes: every wait done on the
	// connection's behalf (a sync's ReadIndex, a handshake's proposal)
	// takes it, so none outlives the connection.
	life    context.Context
	endLife context.CancelFunc

	// readsAhead counts the tree reads (readsTree) queued in calls that the writer has not
	// executed yet; readsDone (buffered 1) wakes the reader when it drops
	// to zero. The reader proposes a write only once readsAhead is zero, so
	// that a read never sees a write its session sent after it.
	// Invariant: readsAhead >= 0.
	readsAhead atomic.Int64
	readsDone  chan struct{}

	sessionTimeout time.Duration
	// lastTouch is when the reader last recorded the session's activity
	// (touchSession); only the reader goroutine touches it.
	lastTouch time.Time
	// writeLimit bounds the writer's wait for a write's outcome by the
	// session timeout; the writer goroutine owns it (one timer, reused).
	writeLimit *time.Timer
	sid        atomic.Int64
	// closingSession is set once the client asked to close its session: the
	// connection then closes after the reply, not when the close applies.
	closingSession atomic.Bool
	// readOnly: a session served while the ensemble has no leader (the
	// client asked for read-only mode); writes answer NotReadOnly.
	readOnly atomic.Bool

	// auth is touched by the reader goroutine (auth packets) and read by the
	// reader (to build txns) and the writer (ACL checks on reads).
	authMu sync.Mutex
	auth   []zkproto.ID
	super  bool
	// sasl is the connection's DIGEST-MD5 exchange (sasl.go); only the
	// reader goroutine touches it.
	sasl *digestmd5.Server

	// lastActivity is unix nanoseconds of the last request, for cons.
	lastActivity atomic.Int64
	received     atomic.Int64
	sent         atomic.Int64
	started      time.Time
	cstats       connStats // cons: last op, zxid and latencies
}

// call is one request waiting for its reply.
type call struct {
	xid  int32
	op   zkproto.OpCode
	req  zkproto.Record
	wait <-chan proposeResult // writes: the proposal; nil for reads
	// closeAfter closes the connection once the reply is written.
	closeAfter bool
	// reply, when set, is a ready answer (errors found while reading).
	reply *replyFrame
	start time.Time
}

// isRead reports whether the writer executes cl against the tree when its
// turn comes (not a write, and no ready answer).
func (cl *call) isRead() bool { return cl.wait == nil && cl.reply == nil }

// readsTree reports whether cl is a read that looks at the tree: any read
// but sync, whose ReadIndex waits for applies (possibly for a leader that
// does not come) and returns no data. Only these count in readsAhead and
// take applyMu.
func (cl *call) readsTree() bool { return cl.isRead() && cl.op != zkproto.OpSync }

// replyFrame is a reply's header and body.
type replyFrame struct {
	hdr  zkproto.ReplyHeader
	body zkproto.Record
}

func newConn(s *Server, nc net.Conn) *conn {
	life, endLife := context.WithCancel(context.Background())
	return &conn{
		life:      life,
		endLife:   endLife,
		srv:       s,
		nc:        nc,
		ip:        remoteIP(nc),
		calls:     make(chan *call, maxOutstanding),
		evWake:    make(chan struct{}, 1),
		closed:    make(chan struct{}),
		readsDone: make(chan struct{}, 1),
		started:   time.Now(),
		// ZooKeeper gives every connection the ip identity of its client.
		auth: []zkproto.ID{{Scheme: "ip", ID: remoteIP(nc)}},
	}
}

func (c *conn) sessionID() int64 { return c.sid.Load() }

// close ends the connection once; the goroutines notice and exit.
func (c *conn) close(reason string) {
	c.once.Do(func() {
		c.srv.log.Debug("closing client connection", "remote", c.nc.RemoteAddr().String(), "session", fmt.Sprintf("0x%x", c.sessionID()), "reason", reason)
		close(c.closed)
		c.endLife()
		c.nc.Close()
	})
}

// serve runs the connection: handshake (or a four-letter word), then the
// reader here and the writer in its own goroutine.
func (c *conn) serve() {
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("panic serving client; connection closed", "remote", c.nc.RemoteAddr().String(), "panic", r)
		}
		c.close("connection ended")
		c.srv.watches.removeWatcher(c)
		c.srv.removeConn(c)
	}()
	if !c.tlsHandshake() {
		return
	}
	br := bufio.NewReaderSize(c.nc, 64<<10)
	if word, ok := c.peekFourLetterWord(br); ok {
		c.srv.serveFourLetterWord(c, word)
		return
	}
	bw := bufio.NewWriterSize(c.nc, 64<<10)
	if !c.handshake(br, bw) {
		return
	}
	c.out.bw = bw
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	c.readLoop(br)
	close(c.calls)
	if c.srv.draining() {
		<-writerDone // it answers what is queued, then closes the connection
		return
	}
	// The writer may still owe replies (the reader stops after a
	// closeSession or a request that ends the connection); a client that
	// hangs up meanwhile ends them, so that nothing waits on its behalf
	// (a sync without a leader) past its going. The writer closes the
	// connection when it is done, which ends this read.
	io.Copy(io.Discard, br)
	c.close("client connection ended")
	<-writerDone
}

// peekFourLetterWord reports whether the connection opens with a known
// four-letter word instead of a length prefix.
func (c *conn) peekFourLetterWord(br *bufio.Reader) (string, bool) {
	c.nc.SetReadDeadline(time.Now().Add(c.srv.cfg.TickTime * 10))
	b, err := br.Peek(4)
	c.nc.SetReadDeadline(time.Time{})
	if err != nil {
		return "", false
	}
	word := string(b)
	if !isFourLetterWord(word) {
		return "", false
	}
	br.Discard(4)
	return word, true
}

// readFrame reads one length-prefixed frame, refusing frames over
// jute.maxbuffer.
func (c *conn) readFrame(br *bufio.Reader, buf []byte) ([]byte, error) {
	return zkproto.ReadFrame(br, buf, c.srv.cfg.JuteMaxBuffer)
}

// readLoop decodes requests until the connection closes. The replies it
// writes itself are flushed when no further request is buffered, so that
// a client's pipelined reads are answered in one write.
func (c *conn) readLoop(br *bufio.Reader) {
	var buf []byte
	unflushed := false
	for {
		if unflushed && !frameBuffered(br) {
			if !c.flush() {
				c.close("reply not written")
				return
			}
			unflushed = false
		}
		frame, err := c.readFrame(br, buf[:0])
		if err != nil && c.srv.draining() {
			return // Shutdown: the writer answers the calls read so far (drain.go)
		}
		if err != nil {
			// As ZooKeeper closes a connection at end of stream: nobody
			// reads the replies still owed, and a writer waiting on the
			// client's behalf (a sync without a leader) must stop now.
			c.logReadError(err)
			c.close("client connection ended")
			return
		}
		buf = frame
		c.received.Add(1)
		c.srv.stats.received.Add(1)
		now := time.Now()
		c.lastActivity.Store(now.UnixNano())
		c.touchSession(now)
		if c.queued.Load() == 0 {
			if answered, ok := c.getDataNow(frame, now); answered {
				if !ok {
					c.close("reply not written")
					return
				}
				unflushed = true
				continue
			}
		}
		cl, ok := c.decodeCall(frame)
		if cl == nil {
			if !ok {
				return
			}
			continue
		}
		if ok && c.queued.Load() == 0 && cl.answerableNow() {
			if !c.answerNow(cl) {
				c.close("reply not written")
				return
			}
			unflushed = true
			continue
		}
		if cl.readsTree() {
			c.readsAhead.Add(1)
		}
		c.queued.Add(1)
		select {
		case c.calls <- cl:
		case <-c.closed:
			return
		}
		if !ok || cl.closeAfter {
			return
		}
	}
}

func (c *conn) logReadError(err error) {
	select {
	case <-c.closed:
		return
	default:
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return
	}
	c.srv.log.Warn("bad frame from client; closing its connection", "remote", c.nc.RemoteAddr().String(), "session", fmt.Sprintf("0x%x", c.sessionID()), "err", err)
}

// writeLoop answers calls in order and writes notifications that fire
// while no reply is being written.
func (c *conn) writeLoop() {
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("panic answering client; connection closed", "panic", r)
		}
		c.close("writer ended")
	}()
	for {
		select {
		case cl, ok := <-c.calls:
			if !ok {
				c.flush()
				return
			}
			if !c.finish(cl) {
				return
			}
			if len(c.calls) == 0 && !c.flush() {
				return
			}
		case <-c.evWake:
			if !c.writeEvents(true) {
				return
			}
		case <-c.closed:
			return
		}
	}
}

// flush writes out what is buffered; false means the connection failed.
func (c *conn) flush() bool {
	c.out.Lock()
	defer c.out.Unlock()
	return c.out.bw.Flush() == nil
}

// finish waits for a call's outcome, writes the notifications that came
// before it, then its reply. It reports false when the connection must end.
func (c *conn) finish(cl *call) bool {
	var res proposeResult
	if cl.wait != nil {
		var ok bool
		if res, ok = c.await(cl); !ok {
			return false
		}
	}
	if res.applied != nil && sessionMoved(res.applied.results) {
		// ZooKeeper's FinalRequestProcessor: SessionMoved is a connection
		// level error; the connection closes without a reply.
		c.srv.log.Info("session moved to another server; closing its old connection",
			"session", fmt.Sprintf("0x%x", c.sessionID()), "remote", c.nc.RemoteAddr().String())
		c.flush()
		c.close("session moved to another server")
		return false
	}
	ok := c.answer(cl, res)
	c.queued.Add(-1)
	if cl.readsTree() && c.readsAhead.Add(-1) == 0 {
		select {
		case c.readsDone <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
	if ok && cl.closeAfter {
		c.flush()
		return false
	}
	return ok
}

// writeReply writes the notifications queued so far (every event of the
// txns the reply reflects), then the reply, into the output buffer.
func (c *conn) writeReply(cl *call, rf *replyFrame) bool {
	c.out.Lock()
	defer c.out.Unlock()
	if !c.writeEventsLocked() {
		return false
	}
	return c.writeReplyLocked(cl, rf)
}

// writeReplyLocked writes the reply into the output buffer; out's lock is
// held.
func (c *conn) writeReplyLocked(cl *call, rf *replyFrame) bool {
	b := zkproto.AppendReply(c.out.scratch[:0], rf.hdr, rf.body)
	_, err := c.out.bw.Write(b)
	c.keepScratch(b)
	if err != nil {
		return false
	}
	c.observeReply(cl.op, cl.start, cl.wait != nil, rf.hdr)
	return true
}

// await waits for a write's outcome, writing the notifications that come
// meanwhile, at most the session timeout. It reports false when the
// connection closed (or was closed for want of an outcome).
func (c *conn) await(cl *call) (proposeResult, bool) {
	select {
	case res := <-cl.wait:
		return res, true
	default:
	}
	// The outcome is not in yet (its fsync is under way): send the replies
	// buffered so far rather than hold them for it. Replies that are ready
	// together still share one write.
	if !c.flush() {
		return proposeResult{}, false
	}
	// A write with no outcome within the session timeout (no leader) ends
	// the connection: its client, whose pings queue behind it, would give
	// up on this server about then anyway.
	if c.writeLimit == nil {
		c.writeLimit = time.NewTimer(c.sessionTimeout)
	} else {
		c.writeLimit.Reset(c.sessionTimeout) // no stale tick since Go 1.23
	}
	defer c.writeLimit.Stop()
	for {
		select {
		case res := <-cl.wait:
			return res, true
		case <-c.evWake:
			// Out now, as ZooKeeper sends a notification when it fires,
			// not with the reply the session waits for.
			if !c.writeEvents(true) {
				return proposeResult{}, false
			}
		case <-c.writeLimit.C:
			c.srv.log.Info("no outcome for a write within the session timeout; closing the connection",
				"session", fmt.Sprintf("0x%x", c.sessionID()), "timeout", c.sessionTimeout)
			c.close("write outcome not in within the session timeout")
			return proposeResult{}, false
		case <-c.closed:
			return proposeResult{}, false
		}
	}
}

// answer executes cl (unless its reply is ready) and writes the
// notifications that belong before its reply, then the reply, into the
// output buffer; false means the connection failed.
func (c *conn) answer(cl *call, res proposeResult) bool {
	if cl.reply != nil {
		return c.writeReply(cl, cl.reply)
	}
	if cl.readsTree() {
		return c.answerRead(cl)
	}
	// A write's reply (its txn's events are queued before its result
	// reached the call), or sync's, whose ReadIndex is not waited for under
	// out's lock.
	return c.writeReply(cl, c.execute(cl, res))
}

// answerRead executes a read that looks at the tree and writes the
// notifications queued before it looked, then its reply: not one queued
// after. Those fired after the read saw the tree (a watch the read set, a
// change it does not show), and ZooKeeper answers a read before a later
// commit fires its watches; go-zookeeper adds a watcher only when the
// reply of the read that set it arrives and drops a notification that
// comes before, so the watch would be lost. out's lock is taken first and
// kept until the reply is written, so no goroutine writes the later
// events in between; the read and taking the queue are one step under
// Server.applyMu (for reading), so the queue holds exactly the events of
// the txns the read sees. The later events stay queued, and their
// evWake has the writer send them.
func (c *conn) answerRead(cl *call) bool {
	c.out.Lock()
	defer c.out.Unlock()
	c.srv.applyMu.RLock()
	rf := c.execute(cl, proposeResult{})
	frames := c.takeEventsLocked()
	c.srv.applyMu.RUnlock()
	if !c.writeEventFramesLocked(frames) {
		return false
	}
	return c.writeReplyLocked(cl, rf)
}

// awaitReads waits until the writer has executed every read queued so
// far; the reader calls it before proposing a write, so that the write
// cannot apply before those reads look at the tree (ZooKeeper's
// CommitProcessor likewise applies a commit only once the reads in flight
// are done). It reports false when the connection closed.
func (c *conn) awaitReads() bool {
	for c.readsAhead.Load() > 0 {
		select {
		case <-c.readsDone:
		case <-c.closed:
			return false
		}
	}
	return true
}

// sessionMoved reports whether a write failed because its session now
// belongs to another server.
func sessionMoved(results []znode.Result) bool {
	for _, r := range results {
		if r.Err == zkproto.ErrSessionMoved {
			return true
		}
	}
	return false
}

// writeEvents writes the queued notifications, and with flush sends them.
func (c *conn) writeEvents(flush bool) bool {
	c.out.Lock()
	defer c.out.Unlock()
	if !c.writeEventsLocked() {
		return false
	}
	return !flush || c.out.bw.Flush() == nil
}

// writeEventsLocked writes the queued notifications into the output
// buffer; out's lock is held.
func (c *conn) writeEventsLocked() bool {
	return c.writeEventFramesLocked(c.takeEventsLocked())
}

// takeEventsLocked takes the queued notifications; out's lock is held
// (the queue's buffer is swapped with out's spare, not written under ev's
// lock, so that notify never waits for the socket).
func (c *conn) takeEventsLocked() []byte {
	c.ev.Lock()
	defer c.ev.Unlock()
	frames := c.ev.frames
	if len(frames) == 0 {
		return nil
	}
	c.ev.frames, c.ev.n = c.out.evSpare[:0], 0
	c.out.evSpare = nil
	return frames
}

// writeEventFramesLocked writes notifications taken from the queue into
// the output buffer and keeps their buffer as out's spare; out's lock is
// held.
func (c *conn) writeEventFramesLocked(frames []byte) bool {
	if len(frames) == 0 {
		return true
	}
	_, err := c.out.bw.Write(frames)
	if cap(frames) <= 64<<10 {
		c.out.evSpare = frames
	} else {
		c.out.evSpare = nil // a burst's buffer is not kept
	}
	return err == nil
}

// notify queues a watch notification; it never blocks the apply loop. A
// client too slow to take its notifications is disconnected.
func (c *conn) notify(typ zkproto.EventType, path string, acl []zkproto.ACL, zxid int64) {
	if acl != nil {
		ids, super := c.identities()
		if znode.CheckACLList(acl, zkproto.PermRead, ids, super) != zkproto.ErrOK {
			return
		}
	}
	c.ev.Lock()
	full := c.ev.n >= maxQueuedEvents
	if !full {
		c.ev.frames = zkproto.AppendNotification(c.ev.frames, zkproto.WatcherEvent{Type: typ, State: zkproto.StateSyncConnected, Path: path})
		c.ev.n++
	}
	c.ev.Unlock()
	if full {
		c.srv.log.Warn("client does not read its watch notifications; closing", "session", fmt.Sprintf("0x%x", c.sessionID()))
		c.close("notification queue full")
		return
	}
	select {
	case c.evWake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// identities returns the session's auth identities and super flag. The
// slice is shared (addIdentity replaces it, never changes it in place):
// callers must not modify it.
func (c *conn) identities() ([]zkproto.ID, bool) {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	return c.auth, c.super
}

func (c *conn) addIdentity(id zkproto.ID, super bool) {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	for _, have := range c.auth {
		if have == id {
			return
		}
	}
	c.auth = javaSetOrder(append(c.auth[:len(c.auth):len(c.auth)], id)) // a new slice: readers keep theirs
	c.super = c.super || super
}

// javaSetOrder orders identities the way ZooKeeper iterates a connection's
// auth info (a ConcurrentHashMap-backed set of Id): "auth" ACLs expand, and
// whoAmI lists, in that order. ids is in insertion order.
func javaSetOrder(ids []zkproto.ID) []zkproto.ID {
	hashes := make([]int32, len(ids))
	for i, id := range ids {
		hashes[i] = javahash.ID(id.Scheme, id.ID)
	}
	out := make([]zkproto.ID, 0, len(ids))
	for _, i := range javahash.Order(hashes, javahash.ConcurrentHashMapCapacity(len(ids))) {
		out = append(out, ids[i])
	}
	return out
}

// writeRaw writes a frame directly (handshake only, before the writer runs).
func writeRaw(bw *bufio.Writer, frame []byte) error {
	if _, err := bw.Write(frame); err != nil {
		return err
	}
	return bw.Flush()
}
