package quorum

import (
	"bufio"
	"encoding/binary"
	"time"
	"unsafe"

	"github.com/zkafka/zkafka/zkproto"
)

// The reader answers a read itself when nothing is handed to the writer
// unanswered (conn.queued is zero): every earlier reply of the session is
// in the output by then, so answering now keeps the session's order, and
// the request costs no goroutine hand-off or wake-up. Everything else (a
// write, a read behind a write still in flight, sync) goes to the writer.

// scratchKeep is the largest reply scratch buffer a connection keeps
// between replies; a larger reply's buffer is let go.
const scratchKeep = 64 << 10

// touchEvery is how often a busy session's activity is recorded: at most
// once per touchEvery, a small fraction of any session timeout (two ticks
// at least), so that a session cannot expire for want of a touch skipped.
const touchEvery = time.Millisecond

// touchSession records the session's activity (a request arrived at now)
// for expiry, at most every touchEvery. Only the reader calls it.
func (c *conn) touchSession(now time.Time) {
	if c.readOnly.Load() {
		return
	}
	if !c.lastTouch.IsZero() && now.Sub(c.lastTouch) < touchEvery {
		return
	}
	c.lastTouch = now
	c.srv.tracker.touch(c.sessionID(), now)
	c.srv.noteActivity(c.sessionID(), c.sessionTimeout)
}

// frameBuffered reports whether br holds a whole request frame, so that
// the reader can read it without waiting for the client.
func frameBuffered(br *bufio.Reader) bool {
	if br.Buffered() < 4 {
		return false
	}
	lb, _ := br.Peek(4)
	n := int(int32(binary.BigEndian.Uint32(lb)))
	return n < 0 || br.Buffered()-4 >= n // a bad length fails at once too
}

// answerableNow reports whether the reader may answer cl itself once
// nothing is queued at the writer: a read, or an answer ready already (a
// ping, an error). Not a write, nor sync (its ReadIndex may wait for a
// leader), nor a call after which the connection closes.
func (cl *call) answerableNow() bool {
	return cl.wait == nil && !cl.closeAfter && cl.op != zkproto.OpSync
}

// answerNow answers cl on the reader goroutine; false means the
// connection failed.
func (c *conn) answerNow(cl *call) bool {
	return c.answer(cl, proposeResult{})
}

// getDataNow answers a getData without a watch, received at now, straight
// from its frame and without allocating: the hot read. answered is false
// for any other request (and whenever a request hook or enforced
// authentication must see it first); it then goes the general way
// (decodeCall). ok false means the connection failed.
func (c *conn) getDataNow(frame []byte, now time.Time) (answered, ok bool) {
	if c.srv.cfg.RequestHook != nil || c.srv.cfg.SASL.EnforceAuth {
		return false, true
	}
	r := zkproto.Reader{Src: frame}
	var h zkproto.RequestHeader
	h.Decode(&r)
	if h.Type != zkproto.OpGetData {
		return false, true
	}
	pb := r.Buffer()
	watch := r.Bool()
	if r.Err() != nil || watch {
		return false, true
	}
	// The path aliases the frame, which the next read reuses: nothing
	// keeps it (the lookup and the namespace statistics copy what they
	// keep).
	path := unsafe.String(unsafe.SliceData(pb), len(pb))
	ids, super := c.identities()
	// As answerRead: out's lock first, then the read and the events it
	// sees as one step, so that none fired after it precedes its reply.
	c.out.Lock()
	defer c.out.Unlock()
	c.srv.applyMu.RLock()
	tree := c.srv.tree.Load()
	data, st, err := tree.GetChecked(path, zkproto.PermRead, ids, super)
	hdr := zkproto.ReplyHeader{Xid: h.Xid, Zxid: tree.LastZxid(), Err: err}
	frames := c.takeEventsLocked()
	c.srv.applyMu.RUnlock()
	if err == zkproto.ErrOK {
		c.srv.stats.read(path, int64(len(data)))
	}
	if !c.writeEventFramesLocked(frames) {
		return true, false
	}
	b, pos := zkproto.BeginFrame(c.out.scratch[:0])
	b = hdr.Append(b)
	if err == zkproto.ErrOK {
		resp := zkproto.GetDataResponse{Data: data, Stat: st}
		b = resp.Append(b)
	}
	b = zkproto.EndFrame(b, pos)
	_, werr := c.out.bw.Write(b)
	c.keepScratch(b)
	c.observeReply(zkproto.OpGetData, now, false, hdr)
	return true, werr == nil
}

// keepScratch keeps b as the reply scratch buffer unless it grew large.
// out's lock is held.
func (c *conn) keepScratch(b []byte) {
	if cap(b) > scratchKeep {
		b = nil
	}
	c.out.scratch = b
}
