package quorum

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkafka/zkafka/zkproto"
)

// waitLimit bounds every wait of the unit tests: generous, because the
// machine may be busy; a passing test never waits for it.
const waitLimit = 10 * time.Second

// checkFor polls cond until it holds or waitLimit passes.
func checkFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !poll(cond) {
		t.Fatalf("gave up waiting for %s", what)
	}
}

// poll reports whether cond came to hold within waitLimit.
func poll(cond func() bool) bool { return pollFor(waitLimit, cond) }

// pollFor reports whether cond came to hold within d.
func pollFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// testClient is one client connection to a Server over net.Pipe, speaking
// the wire protocol through zkproto's codecs. A goroutine reads every frame
// the server sends; the test takes them with next.
type testClient struct {
	t      testing.TB
	srv    *Server
	nc     net.Conn // the client's end
	server net.Conn // the server's end, to find its *conn
	br     *bufio.Reader

	mu struct {
		sync.Mutex
		ops    map[int32]zkproto.OpCode // xid → op of requests not yet answered
		frames []string                 // rendered frames not yet taken
		closed bool                     // the server closed the connection
	}
}

// dial opens a connection to s; the server serves it as an accepted one.
func dial(t testing.TB, s *Server) *testClient {
	cl, sv := net.Pipe()
	c := &testClient{t: t, srv: s, nc: cl, server: sv, br: bufio.NewReader(cl)}
	c.mu.ops = map[int32]zkproto.OpCode{}
	s.accept(sv)
	t.Cleanup(func() { cl.Close() })
	return c
}

// connect sends a ConnectRequest and reads the ConnectResponse; ok is false
// when the server closed the connection without one.
func (c *testClient) connect(req zkproto.ConnectRequest) (zkproto.ConnectResponse, bool) {
	c.t.Helper()
	c.nc.SetDeadline(time.Now().Add(waitLimit))
	defer c.nc.SetDeadline(time.Time{})
	if _, err := c.nc.Write(zkproto.AppendFrame(nil, &req)); err != nil {
		return zkproto.ConnectResponse{}, false
	}
	frame, err := zkproto.ReadFrame(c.br, nil, zkproto.MaxBuffer)
	if err != nil {
		return zkproto.ConnectResponse{}, false
	}
	var resp zkproto.ConnectResponse
	r := zkproto.NewReader(frame)
	resp.Decode(r)
	if err := r.Complete(); err != nil {
		c.t.Fatalf("bad connect response: %v", err)
	}
	go c.readLoop()
	return resp, true
}

// send writes one request; its reply is rendered when it arrives.
func (c *testClient) send(xid int32, op zkproto.OpCode, rec zkproto.Record) {
	c.t.Helper()
	c.mu.Lock()
	c.mu.ops[xid] = op
	c.mu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(waitLimit))
	if _, err := c.nc.Write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: xid, Type: op}, rec)); err != nil {
		c.t.Fatalf("send xid %d: %v", xid, err)
	}
}

// serverConn is the server's *conn for this connection (nil once gone).
func (c *testClient) serverConn() *conn {
	for _, sc := range c.srv.connections() {
		if sc.nc == c.server {
			return sc
		}
	}
	return nil
}

// readLoop renders every frame from the server until the connection ends.
func (c *testClient) readLoop() {
	for {
		frame, err := zkproto.ReadFrame(c.br, nil, zkproto.MaxBuffer)
		c.mu.Lock()
		if err != nil {
			c.mu.closed = true
			c.mu.Unlock()
			return
		}
		c.mu.frames = append(c.mu.frames, c.renderLocked(frame))
		c.mu.Unlock()
	}
}

// next waits for n more frames (or the end of the connection) and returns
// them, with "closed" last if the connection ended, or a line saying that
// fewer came.
func (c *testClient) next(n int, within time.Duration) []string {
	var out []string
	arrived := pollFor(within, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.mu.frames) >= n || c.mu.closed
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	k := min(n, len(c.mu.frames))
	out = append(out, c.mu.frames[:k]...)
	c.mu.frames = c.mu.frames[k:]
	if len(out) < n && c.mu.closed {
		out = append(out, "closed")
	}
	if !arrived {
		out = append(out, fmt.Sprintf("(%d frames did not come within %v)", n, within))
	}
	return out
}

// untilClosed waits for the end of the connection and returns the frames
// that came before it, then "closed".
func (c *testClient) untilClosed() []string {
	c.t.Helper()
	checkFor(c.t, "the connection to close", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.mu.closed
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append(c.mu.frames, "closed")
	c.mu.frames = nil
	return out
}

// renderLocked decodes one server frame into a line of text: a watch
// event, or a reply decoded by the op of the request with that xid.
func (c *testClient) renderLocked(frame []byte) string {
	r := zkproto.NewReader(frame)
	var h zkproto.ReplyHeader
	h.Decode(r)
	if h.Xid == zkproto.XidNotification {
		var ev zkproto.WatcherEvent
		ev.Decode(r)
		return fmt.Sprintf("event %s %s", eventName(ev.Type), ev.Path)
	}
	op, ok := c.mu.ops[h.Xid]
	if !ok {
		return fmt.Sprintf("xid=%d unexpected reply", h.Xid)
	}
	delete(c.mu.ops, h.Xid)
	head := fmt.Sprintf("xid=%d zxid=%d", h.Xid, h.Zxid)
	if h.Err != zkproto.ErrOK {
		return fmt.Sprintf("%s err=%q", head, strings.TrimPrefix(h.Err.Error(), "zk: "))
	}
	rec := replyRecord(op)
	if rec == nil {
		return head + " ok"
	}
	rec.Decode(r)
	if err := r.Complete(); err != nil {
		return fmt.Sprintf("%s bad body: %v", head, err)
	}
	return head + " " + renderRecord(rec)
}

// replyRecord is the body a successful reply to op carries (nil: none).
func replyRecord(op zkproto.OpCode) zkproto.Record {
	switch op {
	case zkproto.OpCreate:
		return &zkproto.CreateResponse{}
	case zkproto.OpCreate2:
		return &zkproto.Create2Response{}
	case zkproto.OpGetData:
		return &zkproto.GetDataResponse{}
	case zkproto.OpExists:
		return &zkproto.ExistsResponse{}
	case zkproto.OpSetData:
		return &zkproto.SetDataResponse{}
	case zkproto.OpGetChildren:
		return &zkproto.GetChildrenResponse{}
	case zkproto.OpSync:
		return &zkproto.SyncResponse{}
	}
	return nil
}

// renderRecord shows the fields of a reply that do not depend on the clock.
func renderRecord(rec zkproto.Record) string {
	switch r := rec.(type) {
	case *zkproto.CreateResponse:
		return "path=" + r.Path
	case *zkproto.Create2Response:
		return fmt.Sprintf("path=%s czxid=%d", r.Path, r.Stat.Czxid)
	case *zkproto.GetDataResponse:
		return fmt.Sprintf("data=%q version=%d mzxid=%d", r.Data, r.Stat.Version, r.Stat.Mzxid)
	case *zkproto.ExistsResponse:
		return fmt.Sprintf("version=%d mzxid=%d", r.Stat.Version, r.Stat.Mzxid)
	case *zkproto.SetDataResponse:
		return fmt.Sprintf("version=%d mzxid=%d", r.Stat.Version, r.Stat.Mzxid)
	case *zkproto.GetChildrenResponse:
		return fmt.Sprintf("children=%v", r.Children)
	case *zkproto.SyncResponse:
		return "path=" + r.Path
	}
	return fmt.Sprintf("%T", rec)
}

func eventName(t zkproto.EventType) string {
	switch t {
	case zkproto.EventNodeCreated:
		return "NodeCreated"
	case zkproto.EventNodeDeleted:
		return "NodeDeleted"
	case zkproto.EventNodeDataChanged:
		return "NodeDataChanged"
	case zkproto.EventNodeChildrenChanged:
		return "NodeChildrenChanged"
	}
	return fmt.Sprintf("event(%d)", int32(t))
}
