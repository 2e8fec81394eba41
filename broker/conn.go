package broker

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/segment"
)

// conn is one client connection: a reader goroutine (serve) that reads,
// decodes and handles requests one at a time, and a writer goroutine
// (writeLoop) that writes their responses in the same order. A response
// with nothing queued before it is written by the reader itself when it
// is small (most produce answers, metadata, heartbeats) or no request
// waits behind it (a consumer's fetch) (send): that saves a hand-off to
// the writer, a thread wake-up that on a busy machine waits for a time
// slice; responses still leave in request order. Handling one
// request at a time per connection is what Kafka does too (it mutes the
// channel until the response is sent), so a fetch parked in a long poll
// delays the requests behind it on that connection only; clients use
// separate connections for fetches. A large produce request is handled on
// a third goroutine while the reader reads the next request, still one
// request handled at a time (conn_pipeline.go).
type conn struct {
	b   *Broker
	nc  net.Conn
	log *slog.Logger
	// listener is the name of the listener it came on: Metadata and
	// FindCoordinator answer with that listener's endpoints. tls is
	// whether nc is a *tls.Conn (no sendfile: sendRecords).
	listener string
	tls      bool
	// princ is the principal (principal.go; nil: anonymous); sasl the
	// authentication of a SASL listener's connection, nil on others
	// (sasl_conn.go).
	princ atomic.Pointer[string]
	sasl  *saslConn

	// out carries responses to the writer, in request order. Closed by
	// the reader when it stops; the writer then flushes and closes nc.
	out chan *response
	// queued counts the responses sent on out and not yet written (and,
	// for the last of them, flushed): only the reader adds to it, so when
	// the reader sees 0 the writer is idle with bw empty, and the reader
	// may write to nc itself (send).
	queued atomic.Int32
	// inlineResponses counts the responses the reader wrote itself (tests).
	inlineResponses atomic.Int64
	// bw buffers the writes to nc: the writer's, and the reader's when
	// queued is 0 (send); sink is where sendRecords sends records, made at
	// the first fetch. Both belong to whichever goroutine writes.
	bw   *bufio.Writer
	sink io.Writer
	// writerGone is closed when the writer failed; the reader stops.
	writerGone chan struct{}
	writerErr  atomic.Bool
	// stopping is set by stopReading before it sets the read deadline, so
	// that the reader, which moves its own deadline while idle, cannot
	// undo a Shutdown (see awaitRequest).
	stopping atomic.Bool

	// The request buffer (reader goroutine only): buf is reused across
	// requests; acct is the connection's share of the broker's request
	// budget, which buffers larger than baseFrameBytes come from.
	buf  []byte
	acct *budgetAccount

	// pipe hands large produce requests to a second goroutine, which
	// handles them while the reader reads the next (conn_pipeline.go).
	pipe pipeline

	// Per-connection scratch reused across requests (by the goroutine
	// handling the request: the reader, or the handler it handed it to).
	hdr     kproto.RequestHeader // the request being handled
	scratch []byte               // decompression buffer for ValidateBatch
	// validated says, per partition of the produce request being handled
	// in request order, that its batch passed ValidateBatch already
	// (conn_pipeline.go's prevalidate); nil: none did. batchValidated is
	// that for the partition producePartition is at.
	validated      []bool
	batchValidated bool
	produceReq     kproto.ProduceRequest
	produceResp    kproto.ProduceResponse
	// produceWaits are the partitions an acks=all produce waits for.
	produceWaits []produceWait
	fetchReq     kproto.FetchRequest
	fetch        fetchState
	listReq      kproto.ListOffsetsRequest
	metaReq      kproto.MetadataRequest
	// quota is the client quota state of the request being handled
	// (quota_conn.go).
	quota quotaReq
}

// response is a complete response frame, possibly with holes that the
// writer fills from segment files with sendfile (fetch responses).
type response struct {
	buf    []byte
	holes  []kproto.Hole
	ranges []segment.FileRange // ranges[i] fills holes[i]
}

// The request buffer of a connection. Every connection keeps a buffer of
// baseFrameBytes, which small requests (most of them) are read into; it is
// a fixed cost per connection, like the read buffer, and is not charged to
// the request budget. A larger request grows the buffer as its bytes
// arrive (kproto.ReadFrameBody), each step taken from the budget;
// the grown buffer is kept for the next requests (a producer's requests
// are much the same size, so they are read with no growth or copy) unless
// it is over maxKeptFrameBytes, and dropped back to the base size once the
// connection has been idle for keptFrameIdle.
const (
	baseFrameBytes    = 64 << 10
	maxKeptFrameBytes = 16 << 20
	keptFrameIdle     = 2 * time.Second
)

// readBufferBytes is the connection's read buffer (see readLoop).
const readBufferBytes = 16 << 10

var responsePool = sync.Pool{New: func() any { return &response{buf: make([]byte, 0, 4096)} }}

func newResponse() *response { return responsePool.Get().(*response) }

// release drops the segment references and returns r to the pool.
func (r *response) release() {
	for i := range r.ranges {
		r.ranges[i].Release()
	}
	clear(r.ranges)
	r.ranges = r.ranges[:0]
	r.holes = r.holes[:0]
	if cap(r.buf) > 1<<20 {
		r.buf = make([]byte, 0, 4096) // do not pin huge buffers
	}
	r.buf = r.buf[:0]
	responsePool.Put(r)
}

func newConn(b *Broker, nc net.Conn) *conn {
	c := &conn{b: b, nc: nc, log: b.log.With("remote", nc.RemoteAddr().String()),
		out: make(chan *response, 16), writerGone: make(chan struct{})}
	c.bw = bufio.NewWriterSize(nc, 64<<10)
	c.acct = b.budget.newAccount(c.evict)
	return c
}

// stopReading makes the reader stop before its next request (Shutdown).
func (c *conn) stopReading() {
	c.stopping.Store(true)
	c.nc.SetReadDeadline(time.Now())
}

// evict is called by the request budget when it takes this connection's
// bytes back (request_budget.go): the connection is closed.
func (c *conn) evict() {
	c.log.Warn("closing connection: request memory exhausted while it was reading a request (queued.max.request.bytes)",
		"queued_max_request_bytes", c.b.cfg.QueuedMaxRequestBytes)
	c.nc.Close()
}

// serve is the reader goroutine.
func (c *conn) serve() {
	defer c.b.trackConn(c, false)
	c.startSASL()
	defer c.stopSASL()
	if c.tls && !c.handshake() {
		return
	}
	if !c.b.goTracked("kafka-conn-writer", c.writeLoop) {
		c.nc.Close()
		return
	}
	defer close(c.out)
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic serving connection; closing it", "panic", r, "stack", string(debug.Stack()))
			c.nc.Close()
		}
	}()
	c.readLoop()
}

func (c *conn) readLoop() {
	// The bufio buffer only batches small requests (several per read);
	// a larger frame's body is read straight into the frame buffer, and
	// only what bufio had already read of it is copied, so keep it small.
	br := bufio.NewReaderSize(c.nc, readBufferBytes)
	c.buf = make([]byte, 0, baseFrameBytes)
	defer func() { c.acct.close(c.buf); c.buf = nil }()
	defer c.endPipeline() // before the account closes: it gives the spare back
	for {
		frame, err := c.readRequest(br)
		if err != nil {
			c.logReadError(err)
			return
		}
		valid := c.prevalidate(frame) // while the handler still works (conn_pipeline.go)
		if !c.awaitHandler() {        // the request before it is answered
			return
		}
		if c.sasl != nil {
			handled, ok := c.authenticate(frame)
			if !ok {
				return
			}
			if handled {
				continue
			}
		}
		hdr := &c.hdr // in the conn: handlers take its address, which would move a local to the heap
		var body []byte
		*hdr, body, err = kproto.ParseRequestHeader(frame, nil)
		if err != nil {
			c.log.Warn("closing connection: malformed request header", "err", err)
			return
		}
		if c.handOff(hdr, frame, body, valid) {
			continue // handled meanwhile by the handler goroutine
		}
		if !c.handle(hdr, body, len(frame), br.Buffered() > 0, false) {
			return
		}
		if cap(c.buf) > maxKeptFrameBytes {
			c.dropBuffer() // an unusually large request: do not keep its buffer
		}
	}
}

// inlineResponseBytes bounds the responses the reader writes itself while
// the client has more requests waiting: a write of that much fits the
// socket's send buffer, so it does not hold up reading them.
const inlineResponseBytes = 16 << 10

// send hands resp to the writer, or writes it itself when nothing is
// queued before it and either it is small or no request waits behind it
// (more: bytes of the next request are already read), as for a consumer's
// fetch, which waits for its answer before it asks again: then writing
// it here, records from the file included, costs the client nothing and
// saves the hand-off. A large answer to a client that pipelines goes to
// the writer, so that the next requests are read and handled meanwhile.
// false: the connection failed. Reader goroutine only.
func (c *conn) send(resp *response, more bool) bool {
	small := len(resp.holes) == 0 && len(resp.buf) <= inlineResponseBytes
	if c.queued.Load() == 0 && (small || !more) {
		var err error
		if !c.writerErr.Load() {
			c.inlineResponses.Add(1)
			if small {
				_, err = c.nc.Write(resp.buf) // c.bw is empty (queued)
			} else if err = c.writeResponse(c.bw, resp); err == nil {
				err = c.bw.Flush()
			}
		}
		resp.release()
		if err != nil {
			c.log.Debug("connection write failed", "err", err)
			c.failWriter()
		}
		return !c.writerErr.Load()
	}
	c.queued.Add(1)
	select {
	case c.out <- resp:
		return true
	case <-c.writerGone:
		c.queued.Add(-1)
		resp.release()
		return false
	}
}

// readRequest waits for the next request and reads its frame into c.buf.
// The frame is valid until the next call.
func (c *conn) readRequest(br *bufio.Reader) ([]byte, error) {
	if err := c.awaitRequest(br); err != nil {
		return nil, err
	}
	n, err := kproto.ReadFrameSize(br, c.frameLimit())
	if err != nil {
		return nil, err
	}
	c.reclaimBuffer(false) // the handed-off request's buffer, if it is free (conn_pipeline.go)
	// Only a connection with a charged buffer is known to the budget (a
	// take marks it as reading too), so small requests on the base buffer
	// never touch the budget's lock.
	kept := charged(cap(c.buf))
	if kept {
		c.acct.beginFrame()
	}
	frame, err := kproto.ReadFrameBody(br, c.buf, n, c.growBuffer)
	if err != nil {
		return nil, err
	}
	if (kept || charged(cap(c.buf))) && !c.acct.endFrame() {
		return nil, errBudgetEvicted
	}
	return frame, nil
}

// awaitRequest waits until the next request starts. A connection that
// keeps a buffer larger than the base (or a second one, conn_pipeline.go)
// waits at most keptFrameIdle, then drops it (and waits on without a
// deadline), so idle connections hold only the base buffer.
func (c *conn) awaitRequest(br *bufio.Reader) error {
	if br.Buffered() > 0 || cap(c.buf) <= baseFrameBytes && !c.pipe.out && c.pipe.spare == nil {
		return nil
	}
	c.nc.SetReadDeadline(time.Now().Add(keptFrameIdle))
	if c.stopping.Load() { // Shutdown's deadline may have come just before ours
		return os.ErrDeadlineExceeded
	}
	_, err := br.Peek(1)
	if errors.Is(err, os.ErrDeadlineExceeded) && !c.stopping.Load() {
		err = nil
		if !c.awaitHandler() {
			err = errConnClosing
		}
		c.dropBuffer()
	}
	c.nc.SetReadDeadline(time.Time{})
	if c.stopping.Load() {
		return os.ErrDeadlineExceeded // Shutdown: stop before the next request
	}
	return err
}

// growBuffer is the kproto.GrowFunc of the connection: it takes the larger
// buffer from the request budget (waiting, and so reading nothing more,
// until it is granted), copies, and gives the old one back.
func (c *conn) growBuffer(buf []byte, want int) ([]byte, error) {
	nb, err := c.acct.take(want, c.b.done)
	if err != nil {
		return buf, err
	}
	nb = nb[:len(buf)]
	copy(nb, buf)
	c.acct.put(buf)
	c.buf = nb
	return nb, nil
}

// dropBuffer goes back to a base-size buffer, and gives the spare of the
// pipeline back too.
func (c *conn) dropBuffer() {
	c.acct.put(c.buf)
	c.buf = make([]byte, 0, baseFrameBytes)
	c.acct.put(c.pipe.spare)
	c.pipe.spare = nil
}

func (c *conn) logReadError(err error) {
	var fse *kproto.FrameSizeError
	switch {
	case errors.As(err, &fse):
		c.log.Warn("closing connection: request size out of bounds", "size", fse.Size, "socket_request_max_bytes", fse.Max, "err", err)
	case errors.Is(err, errBudgetEvicted), errors.Is(err, errConnClosing): // evict logged it; Shutdown
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed), errors.Is(err, os.ErrDeadlineExceeded):
	default:
		c.log.Debug("connection read ended", "err", err)
	}
}

// writeLoop is the writer goroutine: it writes responses in order,
// flushing whenever no more are queued, and closes the socket at the end.
func (c *conn) writeLoop() {
	defer c.nc.Close()
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic writing responses; closing connection", "panic", r, "stack", string(debug.Stack()))
			c.failWriter()
			for resp := range c.out {
				resp.release()
			}
		}
	}()
	bw := c.bw
	for resp := range c.out {
		if !c.writerErr.Load() {
			err := c.writeResponse(bw, resp)
			if err == nil && len(c.out) == 0 {
				err = bw.Flush()
			}
			if err != nil {
				c.log.Debug("connection write failed", "err", err)
				c.failWriter()
			}
		}
		resp.release()
		c.queued.Add(-1) // after the flush: see send
	}
	if !c.writerErr.Load() {
		bw.Flush()
	}
}

func (c *conn) failWriter() {
	if c.writerErr.CompareAndSwap(false, true) {
		close(c.writerGone)
		c.nc.Close()
	}
}

// writeResponse writes r's buffer, sending each hole's records from the
// segment file with sendfile.
func (c *conn) writeResponse(bw *bufio.Writer, r *response) error {
	prev := 0
	for i, h := range r.holes {
		if _, err := bw.Write(r.buf[prev:h.At]); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := c.sendRecords(&r.ranges[i], h.Len); err != nil {
			return err
		}
		prev = h.At
	}
	_, err := bw.Write(r.buf[prev:])
	return err
}

// sendRecords sends a segment range to the socket. On a TCP socket
// FileRange.WriteTo uses sendfile(2), so the bytes never enter user space;
// if it ever falls back to copying, recordSink.Write counts the bytes in
// copiedRecordBytes (tests assert it stays 0).
func (c *conn) sendRecords(r *segment.FileRange, want int) error {
	if c.tls {
		return c.copyRecords(r, want)
	}
	if c.sink == nil { // made once: an interface value per fetch would be an allocation
		c.sink = copyCounter{c.nc, &c.b.copiedRecordBytes}
		if sc, ok := c.nc.(syscall.Conn); ok {
			if rc, err := sc.SyscallConn(); err == nil {
				c.sink = recordSink{copyCounter{c.nc, &c.b.copiedRecordBytes}, rc}
			}
		}
	}
	n, err := r.WriteTo(c.sink)
	if err == nil && n != int64(want) {
		err = io.ErrShortWrite
	}
	return err
}

// copyBufPool holds the buffers TLS connections copy records through: a
// TLS record is at most 16 KiB of plaintext, so 64 KiB makes four records
// per read of the segment file and write to the socket.
var copyBufPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// copyRecords sends a segment range through the TLS writer: sendfile
// cannot encrypt, so the bytes are read from the file into a pooled buffer
// (one read and one encrypted write per 64 KiB, no per-record copy) and
// counted in copiedRecordBytes.
func (c *conn) copyRecords(r *segment.FileRange, want int) error {
	bp := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(bp)
	buf := *bp
	var off int64
	for off < r.Len {
		n, err := r.ReadAt(buf, off)
		if n > 0 {
			if _, werr := c.nc.Write(buf[:n]); werr != nil {
				return werr
			}
			c.b.copiedRecordBytes.Add(int64(n))
			off += int64(n)
		}
		if err == io.EOF && off >= r.Len {
			break
		}
		if err != nil && err != io.EOF {
			return err
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
	}
	if off != int64(want) {
		return io.ErrShortWrite
	}
	return nil
}

// copyCounter writes to the connection, counting bytes that were copied
// through user space.
type copyCounter struct {
	w io.Writer
	n *atomic.Int64
}

func (w copyCounter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return w.w.Write(p)
}

// recordSink exposes the socket's descriptor for sendfile while counting
// any fallback copy. rc is the socket's, got once (each SyscallConn call
// allocates).
type recordSink struct {
	copyCounter
	rc syscall.RawConn
}

func (s recordSink) SyscallConn() (syscall.RawConn, error) { return s.rc, nil }
