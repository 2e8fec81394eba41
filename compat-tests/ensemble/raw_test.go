package ensemble

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zkafka/zkafka/zkproto"
)

// rawClient speaks the wire protocol directly (copied from
// compat-tests/zkgo): a session resumed on another server by id and
// password, and a connection the server closes without a reply, are what
// go-zookeeper cannot show.
type rawClient struct {
	t   testing.TB
	nc  net.Conn
	br  *bufio.Reader
	xid int32
	// Session is what the server answered to the connect request.
	Session zkproto.ConnectResponse
}

// dialRaw connects and performs the handshake with req.
func dialRaw(t testing.TB, addr string, req zkproto.ConnectRequest) *rawClient {
	t.Helper()
	rc, err := tryDialRaw(t, addr, req)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// tryDialRaw is dialRaw that returns what went wrong: a server refuses
// (closes without an answer) a client that has seen a newer zxid than it.
func tryDialRaw(t testing.TB, addr string, req zkproto.ConnectRequest) (*rawClient, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
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
		nc.Close()
		return nil, fmt.Errorf("connect response from %s: %w", addr, err)
	}
	r := zkproto.NewReader(frame)
	rc.Session.Decode(r)
	if r.Err() != nil {
		nc.Close()
		return nil, fmt.Errorf("connect response from %s: %w", addr, r.Err())
	}
	return rc, nil
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

// errClosed is tryCall's error when the server closed the connection
// instead of answering.
var errClosed = errors.New("connection closed by the server")

// tryCall sends one request and returns the reply header and body,
// skipping notifications; errClosed when the server closed the connection.
func (rc *rawClient) tryCall(op zkproto.OpCode, req zkproto.Record) (zkproto.ReplyHeader, *zkproto.Reader, error) {
	rc.t.Helper()
	rc.xid++
	if req == nil {
		req = &zkproto.Empty{}
	}
	rc.write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: rc.xid, Type: op}, req))
	for {
		frame, err := rc.readFrame()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return zkproto.ReplyHeader{}, nil, err
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
				return zkproto.ReplyHeader{}, nil, errClosed
			}
			return zkproto.ReplyHeader{}, nil, err
		}
		r := zkproto.NewReader(frame)
		var h zkproto.ReplyHeader
		h.Decode(r)
		if h.Xid == zkproto.XidNotification || h.Xid == zkproto.XidPing {
			continue
		}
		return h, r, nil
	}
}

// call is tryCall that fails the test when there is no reply.
func (rc *rawClient) call(op zkproto.OpCode, req zkproto.Record) (zkproto.ReplyHeader, *zkproto.Reader) {
	rc.t.Helper()
	h, r, err := rc.tryCall(op, req)
	if err != nil {
		rc.t.Fatalf("reply to op %d: %v", op, err)
	}
	if h.Xid != rc.xid {
		rc.t.Fatalf("reply xid %d, want %d", h.Xid, rc.xid)
	}
	return h, r
}

func isReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && !oe.Timeout()
}
