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
// (writeLoop) that writes their responses in the same order. Handling one
// request at a time per connection is what Kafka does too (it mutes the
// channel until the response is sent), so a fetch parked in a long poll
// delays the requests behind it on that connection only; clients use
// separate connections for fetches.
type conn struct {
	b   *Broker
	nc  net.Conn
	log *slog.Logger

	// out carries responses to the writer, in request order. Closed by
	// the reader when it stops; the writer then flushes and closes nc.
	out chan *response
	// writerGone is closed when the writer failed; the reader stops.
	writerGone chan struct{}
	writerErr  atomic.Bool

	// Per-connection scratch reused across requests (reader goroutine only).
	scratch     []byte // decompression buffer for ValidateBatch
	produceReq  kproto.ProduceRequest
	produceResp kproto.ProduceResponse
	fetchReq    kproto.FetchRequest
	fetch       fetchState
	listReq     kproto.ListOffsetsRequest
	metaReq     kproto.MetadataRequest
}

// response is a complete response frame, possibly with holes that the
// writer fills from segment files with sendfile (fetch responses).
type response struct {
	buf    []byte
	holes  []kproto.Hole
	ranges []segment.FileRange // ranges[i] fills holes[i]
}

// maxKeptFrameBytes bounds the request buffer a connection keeps between
// requests: large enough for the multi-MiB Produce requests producers send
// (so they are not reallocated each time), small enough not to pin memory.
const maxKeptFrameBytes = 16 << 20

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
	return &conn{b: b, nc: nc, log: b.log.With("remote", nc.RemoteAddr().String()),
		out: make(chan *response, 16), writerGone: make(chan struct{})}
}

// stopReading makes the reader stop before its next request (Shutdown).
func (c *conn) stopReading() { c.nc.SetReadDeadline(time.Now()) }

// serve is the reader goroutine.
func (c *conn) serve() {
	defer c.b.trackConn(c, false)
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
	buf := make([]byte, 0, 64<<10)
	for {
		frame, err := kproto.ReadFrame(br, buf, int(c.b.cfg.SocketRequestMaxBytes))
		if err != nil {
			c.logReadError(err)
			return
		}
		hdr, body, err := kproto.ParseRequestHeader(frame, nil)
		if err != nil {
			c.log.Warn("closing connection: malformed request header", "err", err)
			return
		}
		resp, err := c.dispatch(&hdr, body)
		if err != nil {
			c.log.Warn("closing connection", "api_key", hdr.APIKey, "api_version", hdr.APIVersion, "err", err)
			return
		}
		if resp != nil {
			select {
			case c.out <- resp:
			case <-c.writerGone:
				resp.release()
				return
			}
		}
		if cap(frame) > maxKeptFrameBytes {
			frame = make([]byte, 0, 64<<10) // drop an unusually large buffer
		}
		buf = frame[:0]
	}
}

func (c *conn) logReadError(err error) {
	var fse *kproto.FrameSizeError
	switch {
	case errors.As(err, &fse):
		c.log.Warn("closing connection: request size out of bounds", "err", err)
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
	bw := bufio.NewWriterSize(c.nc, 64<<10)
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
	var w io.Writer = copyCounter{c.nc, &c.b.copiedRecordBytes}
	if sc, ok := c.nc.(syscall.Conn); ok {
		w = recordSink{copyCounter{c.nc, &c.b.copiedRecordBytes}, sc}
	}
	n, err := r.WriteTo(w)
	if err == nil && n != int64(want) {
		err = io.ErrShortWrite
	}
	return err
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
// any fallback copy.
type recordSink struct {
	copyCounter
	sc syscall.Conn
}

func (s recordSink) SyscallConn() (syscall.RawConn, error) { return s.sc.SyscallConn() }
