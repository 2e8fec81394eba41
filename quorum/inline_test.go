package quorum

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/zkproto"
)

// pipeSession is a ZooKeeper session on a real TCP connection that sends
// prebuilt frames and reads replies into one reused buffer, so that it
// allocates nothing per request (the server's allocations can be counted).
type pipeSession struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
	in []byte
}

func dialRawSession(t testing.TB, addr string) *pipeSession {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(waitLimit))
	s := &pipeSession{t: t, nc: nc, br: bufio.NewReader(nc)}
	req := zkproto.ConnectRequest{TimeOut: 6000, Passwd: make([]byte, 16)}
	if _, err := nc.Write(zkproto.AppendFrame(nil, &req)); err != nil {
		t.Fatal(err)
	}
	if _, err := zkproto.ReadFrame(s.br, nil, zkproto.MaxBuffer); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	return s
}

// reply reads the next frame and returns its header and body.
func (s *pipeSession) reply() (zkproto.ReplyHeader, []byte) {
	s.nc.SetReadDeadline(time.Now().Add(waitLimit))
	body, err := zkproto.ReadFrame(s.br, s.in, zkproto.MaxBuffer)
	if err != nil || len(body) < zkproto.ReplyHeaderSize {
		s.t.Fatalf("reply: %v (%d bytes)", err, len(body))
	}
	s.in = body[:0]
	return zkproto.ReplyHeader{
		Xid:  int32(binary.BigEndian.Uint32(body)),
		Zxid: int64(binary.BigEndian.Uint64(body[4:])),
		Err:  zkproto.Err(int32(binary.BigEndian.Uint32(body[12:]))),
	}, body[zkproto.ReplyHeaderSize:]
}

func getDataFrame(dst []byte, xid int32, path string, watch bool) []byte {
	return zkproto.AppendRequest(dst, zkproto.RequestHeader{Xid: xid, Type: zkproto.OpGetData}, &zkproto.GetDataRequest{Path: path, Watch: watch})
}

func setDataFrame(dst []byte, xid int32, path string, data []byte) []byte {
	return zkproto.AppendRequest(dst, zkproto.RequestHeader{Xid: xid, Type: zkproto.OpSetData}, &zkproto.SetDataRequest{Path: path, Data: data, Version: -1})
}

// getDataValue decodes a getData reply's data.
func getDataValue(t testing.TB, body []byte) []byte {
	t.Helper()
	var resp zkproto.GetDataResponse
	r := zkproto.NewReader(body)
	resp.Decode(r)
	if r.Err() != nil {
		t.Fatalf("getData reply: %v", r.Err())
	}
	return resp.Data
}

// TestGetDataAllocationFree pins the hot read: a getData without a watch,
// one at a time on a real socket as a latency-bound client sends it, costs
// the server no allocation (decode, lookup, reply, statistics).
func TestGetDataAllocationFree(t *testing.T) {
	s := startPlainServer(t, nil)
	zc := connectZK(t, s)
	if _, err := zc.Create("/ns", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := zc.Create("/ns/a", bytes.Repeat([]byte("v"), 100), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c := dialRawSession(t, s.Addr().String())
	frames := [][]byte{getDataFrame(nil, 1, "/ns/a", false), getDataFrame(nil, 2, "/ns/none", false)}
	const perRun = 200
	run := func() {
		for i := range perRun {
			f := frames[i%2]
			if _, err := c.nc.Write(f); err != nil {
				t.Fatal(err)
			}
			h, body := c.reply()
			if i%2 == 0 && (h.Err != zkproto.ErrOK || len(getDataValue(t, body)) != 100) {
				t.Fatalf("getData /ns/a: %v", h.Err)
			}
			if i%2 == 1 && h.Err != zkproto.ErrNoNode {
				t.Fatalf("getData /ns/none: %v, want NoNode", h.Err)
			}
		}
	}
	run() // warm: buffers grown, the namespace's summary made
	// The whole process counts (the server's tickers too): allow one
	// allocation per 20 requests.
	if n := testing.AllocsPerRun(20, run); n > perRun/20 {
		t.Errorf("%v allocations per %d getData requests, want at most %d", n, perRun, perRun/20)
	}
}

// startPlainServer starts a standalone server of the default
// configuration (no metrics, no AdminServer: little runs beside the
// requests) on a free port of 127.0.0.1; with cl, accepting through it.
func startPlainServer(t testing.TB, cl *countingListener) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener = l
	if cl != nil {
		cl.Listener, ln = l, cl
	}
	s, err := StartWithListener(DefaultConfig(t.TempDir()), slog.New(slog.DiscardHandler), ln)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// countingListener counts the writes made on the connections it accepts.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: nc, writes: &l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// TestPipelinedReadsShareWrites: replies to reads a client pipelined (all
// in the server's buffer at once) go out together, in order, in a few
// socket writes rather than one each.
func TestPipelinedReadsShareWrites(t *testing.T) {
	cl := &countingListener{}
	s := startPlainServer(t, cl)
	zc := connectZK(t, s)
	if _, err := zc.Create("/a", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c := dialRawSession(t, s.Addr().String())
	const n = 200
	var batch []byte
	for i := range n {
		batch = getDataFrame(batch, int32(i+1), "/a", false)
	}
	before := cl.writes.Load()
	if _, err := c.nc.Write(batch); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		h, body := c.reply()
		if h.Xid != int32(i+1) || h.Err != zkproto.ErrOK || string(getDataValue(t, body)) != "x" {
			t.Fatalf("reply %d: xid %d err %v", i, h.Xid, h.Err)
		}
	}
	t.Logf("%d socket writes", cl.writes.Load()-before)
	if w := cl.writes.Load() - before; w > 10 {
		t.Errorf("%d pipelined getData replies took %d socket writes, want at most 10", n, w)
	}
}

// TestReadAfterWriteInOrder: a session that pipelines reads and writes in
// one go gets its replies in request order, each read seeing the
// session's writes before it; and a watch notification of a change comes
// before the reply of a read that sees the change.
func TestReadAfterWriteInOrder(t *testing.T) {
	s := startObservedServer(t)
	zc := connectZK(t, s)
	if _, err := zc.Create("/a", []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c := dialRawSession(t, s.Addr().String())
	var batch []byte
	xid := int32(0)
	want := map[int32]string{} // getData xid → the value it must see
	value := "0"
	for i := range 30 {
		xid++
		batch = getDataFrame(batch, xid, "/a", false)
		want[xid] = value
		if i%3 == 1 {
			value = fmt.Sprint(i)
			xid++
			batch = setDataFrame(batch, xid, "/a", []byte(value))
		}
	}
	if _, err := c.nc.Write(batch); err != nil {
		t.Fatal(err)
	}
	for x := int32(1); x <= xid; x++ {
		h, body := c.reply()
		if h.Xid != x || h.Err != zkproto.ErrOK {
			t.Fatalf("reply xid %d err %v, want xid %d", h.Xid, h.Err, x)
		}
		if v, ok := want[x]; ok && string(getDataValue(t, body)) != v {
			t.Fatalf("getData xid %d saw %q, want %q", x, getDataValue(t, body), v)
		}
	}

	// The watcher: getData with a watch, another session changes the node,
	// then reads until it sees the change; the notification must be first.
	for round := range 50 {
		xid++
		c.nc.Write(getDataFrame(nil, xid, "/a", true))
		if h, _ := c.reply(); h.Xid != xid {
			t.Fatalf("watching getData: xid %d", h.Xid)
		}
		next := fmt.Sprint("w", round)
		go zc.Set("/a", []byte(next), -1)
		notified := false
		for seen := false; !seen; {
			xid++
			c.nc.Write(getDataFrame(nil, xid, "/a", false))
			for {
				h, body := c.reply()
				if h.Xid == zkproto.XidNotification {
					notified = true
					continue
				}
				if h.Xid != xid {
					t.Fatalf("reply xid %d, want %d", h.Xid, xid)
				}
				seen = string(getDataValue(t, body)) == next
				break
			}
		}
		if !notified {
			t.Fatalf("round %d: a read saw the new value before the watch notification", round)
		}
	}
}

func TestFrameBuffered(t *testing.T) {
	frame := getDataFrame(nil, 1, "/a", false)
	for _, tc := range []struct {
		name string
		in   []byte
		want bool
	}{
		{"nothing", nil, false},
		{"part of the length", frame[:3], false},
		{"the length only", frame[:4], false},
		{"all but a byte", frame[:len(frame)-1], false},
		{"a whole frame", frame, true},
		{"a frame and part of the next", append(append([]byte{}, frame...), frame[:5]...), true},
		{"a bad length", []byte{0xff, 0xff, 0xff, 0xff}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			br := bufio.NewReader(bytes.NewReader(tc.in))
			br.Peek(len(tc.in)) // buffer everything there is
			if got := frameBuffered(br); got != tc.want {
				t.Errorf("frameBuffered = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTouchSessionThrottled: a busy session's activity is recorded at most
// once per touchEvery, and a quiet one's on its next request.
func TestTouchSessionThrottled(t *testing.T) {
	s := newServer(DefaultConfig(t.TempDir()), slog.New(slog.DiscardHandler), nil)
	t0 := time.Unix(1000, 0)
	s.tracker.track(7, time.Minute, t0)
	c := &conn{srv: s}
	c.sid.Store(7)
	seen := func() time.Time {
		s.tracker.mu.Lock()
		defer s.tracker.mu.Unlock()
		return s.tracker.mu.lastSeen[7]
	}
	for _, step := range []struct {
		at, want time.Duration // since t0
	}{
		{0, 0},
		{touchEvery / 2, 0},
		{touchEvery, touchEvery},
		{touchEvery + 1, touchEvery},
		{10 * time.Second, 10 * time.Second},
	} {
		c.touchSession(t0.Add(step.at))
		if got := seen().Sub(t0); got != step.want {
			t.Fatalf("request at +%v: last seen +%v, want +%v", step.at, got, step.want)
		}
	}
}

// TestWatchReplyBeforeItsEvents: the reply of a read that sets a watch
// leaves before any notification of that watch, as in ZooKeeper (the read
// is answered before a later commit fires the watch). go-zookeeper adds
// the watcher only when the reply arrives and drops a notification for a
// path nobody watches, so an event written first is lost: the watcher
// never fires. Another session changes the node all the while, so that
// the watch fires right after the read looks at the tree.
func TestWatchReplyBeforeItsEvents(t *testing.T) {
	s := startPlainServer(t, nil)
	writer := connectZK(t, s)
	if _, err := writer.Create("/w", []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	defer func() { close(stop); <-done }()
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := writer.Set("/w", []byte(fmt.Sprint(i)), -1); err != nil {
				return
			}
		}
	}()

	// A raw session: with no other watch set, the first frame after a
	// watching getData must be its reply.
	c := dialRawSession(t, s.Addr().String())
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	for i := range rounds {
		xid := int32(i + 1)
		frame := getDataFrame(nil, xid, "/w", true)
		if i%2 == 1 { // exists and getChildren set watches the same way
			frame = zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: xid, Type: zkproto.OpExists}, &zkproto.ExistsRequest{Path: "/w", Watch: true})
		}
		if _, err := c.nc.Write(frame); err != nil {
			t.Fatal(err)
		}
		h, _ := c.reply()
		if h.Xid != xid {
			t.Fatalf("round %d: frame xid %d came before the reply (xid %d) of the read that set the watch", i, h.Xid, xid)
		}
		if h, _ := c.reply(); h.Xid != zkproto.XidNotification {
			t.Fatalf("round %d: frame xid %d, want the watch's notification", i, h.Xid)
		}
	}

	// go-zookeeper: every watch it sets fires.
	zc := connectZK(t, s)
	for i := range rounds / 3 {
		_, _, ch, err := zc.GetW("/w")
		if err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-ch:
			if ev.Type != zk.EventNodeDataChanged {
				t.Fatalf("round %d: event %v", i, ev)
			}
		case <-time.After(waitLimit):
			t.Fatalf("round %d: the watch set by GetW never fired while /w kept changing", i)
		}
	}
}
