package zkgo

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/zkafka/zkafka/zkproto"
)

// rawClient speaks the wire protocol directly, for what go-zookeeper cannot
// send: addWatch, whoAmI, multiRead, create2, a chosen session to resume,
// malformed frames.
type rawClient struct {
	t   *testing.T
	nc  net.Conn
	br  *bufio.Reader
	xid int32
	// Session is what the server answered to the connect request.
	Session zkproto.ConnectResponse
}

// dialRaw connects and performs the handshake with req.
func dialRaw(t *testing.T, addr string, req zkproto.ConnectRequest) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	rc := &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
	if req.TimeOut == 0 {
		req.TimeOut = 10000
	}
	if req.Passwd == nil {
		req.Passwd = make([]byte, 16)
	}
	rc.write(zkproto.AppendFrame(nil, &req))
	frame, err := rc.readFrame()
	if err != nil {
		t.Fatalf("connect response: %v", err)
	}
	r := zkproto.NewReader(frame)
	rc.Session.Decode(r)
	if r.Err() != nil {
		t.Fatalf("connect response: %v", r.Err())
	}
	rc.Session.HasReadOnly = len(frame) == 37
	return rc
}

func (rc *rawClient) write(b []byte) {
	rc.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := rc.nc.Write(b); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

func (rc *rawClient) readFrame() ([]byte, error) {
	rc.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	return zkproto.ReadFrame(rc.br, nil, 1<<20)
}

// call sends one request and returns the reply header and body, skipping
// notifications (returned separately).
func (rc *rawClient) call(op zkproto.OpCode, req zkproto.Record) (zkproto.ReplyHeader, *zkproto.Reader, []zkproto.WatcherEvent) {
	rc.t.Helper()
	rc.xid++
	if req == nil {
		req = &zkproto.Empty{}
	}
	rc.write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: rc.xid, Type: op}, req))
	var events []zkproto.WatcherEvent
	for {
		frame, err := rc.readFrame()
		if err != nil {
			rc.t.Fatalf("reply to op %d: %v", op, err)
		}
		r := zkproto.NewReader(frame)
		var h zkproto.ReplyHeader
		h.Decode(r)
		if h.Xid == zkproto.XidNotification {
			var ev zkproto.WatcherEvent
			ev.Decode(r)
			events = append(events, ev)
			continue
		}
		return h, r, events
	}
}

// nextEvent reads the next notification.
func (rc *rawClient) nextEvent() zkproto.WatcherEvent {
	rc.t.Helper()
	frame, err := rc.readFrame()
	if err != nil {
		rc.t.Fatalf("waiting for a notification: %v", err)
	}
	r := zkproto.NewReader(frame)
	var h zkproto.ReplyHeader
	h.Decode(r)
	if h.Xid != zkproto.XidNotification {
		rc.t.Fatalf("expected a notification, got xid %d", h.Xid)
	}
	var ev zkproto.WatcherEvent
	ev.Decode(r)
	return ev
}

// closed reports whether the server closed the connection (bounded wait).
func (rc *rawClient) closed() bool {
	rc.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, err := rc.br.ReadByte(); err != nil {
			ne, ok := err.(net.Error)
			return !(ok && ne.Timeout())
		}
	}
}
