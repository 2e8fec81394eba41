package zkmeta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/zkafka/zkafka/internal/digestmd5"
	"github.com/zkafka/zkafka/zkproto"
)

// SASL to ZooKeeper. go-zookeeper has no SASL, so the broker's dialer
// wraps each connection in a saslConn, which runs the exchange Java's
// ZooKeeperSaslClient runs, in the one moment go-zookeeper waits and
// sends nothing: after the server's ConnectResponse has arrived and
// before go-zookeeper reads it. Then go-zookeeper gets the
// ConnectResponse and the session goes on, authenticated.
//
//	broker (go-zookeeper)        saslConn                        ZooKeeper
//	ConnectRequest ───────────────────────────────────────────────►
//	io.ReadFull(4) ──► reads the ConnectResponse ◄─────────────────
//	                   sasl (102) empty token ─────────────────────►  DIGEST-MD5 challenge
//	                   sasl (102) digest-response ─────────────────►  rspauth (checked)
//	◄── the ConnectResponse
//
// The sasl requests use xids go-zookeeper never uses (saslXid), so no
// reply can be mistaken for one of its own. A failed exchange fails that
// read: go-zookeeper drops the connection and dials again, and the error
// is reported to the Client (Dial returns it).

// saslXid is the first xid of the exchange's requests; go-zookeeper's own
// start at 1 and count up.
const saslXid = 0x7ff00000

// saslTimeout bounds the exchange on one connection.
const saslTimeout = 10 * time.Second

// ErrSASLAuthFailed is a refused SASL authentication (ZooKeeper's AUTHFAILED).
var ErrSASLAuthFailed = errors.New("ZooKeeper SASL authentication failed")

// saslConn is a connection that authenticates before its first read.
// Its fields have no lock: go-zookeeper reads, and sets read deadlines,
// from one goroutine at a time (its connect loop, then the receive loop it
// starts after the ConnectResponse).
type saslConn struct {
	net.Conn
	creds  *SASLCredentials
	failed func(error) // told of a failed exchange

	pending  []byte    // the ConnectResponse frame, for go-zookeeper
	started  bool      // the exchange ran (or was not needed)
	deadline time.Time // go-zookeeper's read deadline, restored after the exchange
}

func (c *saslConn) SetReadDeadline(t time.Time) error {
	c.deadline = t
	return c.Conn.SetReadDeadline(t)
}

func (c *saslConn) SetDeadline(t time.Time) error {
	c.deadline = t
	return c.Conn.SetDeadline(t)
}

func (c *saslConn) Read(p []byte) (int, error) {
	if !c.started {
		c.started = true
		if err := c.authenticate(); err != nil {
			if c.failed != nil {
				c.failed(err)
			}
			return 0, err
		}
	}
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// authenticate reads the ConnectResponse into pending and, if the server
// gave a session, runs the DIGEST-MD5 exchange.
func (c *saslConn) authenticate() error {
	frame, err := readFrame(c.Conn)
	if err != nil {
		return err
	}
	c.pending = binary.BigEndian.AppendUint32(nil, uint32(len(frame)))
	c.pending = append(c.pending, frame...)
	var resp zkproto.ConnectResponse
	r := zkproto.NewReader(frame)
	resp.Decode(r)
	if r.Err() != nil || resp.SessionID == 0 {
		return nil // go-zookeeper handles a bad or expired session
	}
	limit := time.Now().Add(saslTimeout)
	if !c.deadline.IsZero() && c.deadline.Before(limit) {
		limit = c.deadline
	}
	c.Conn.SetReadDeadline(limit)
	defer c.Conn.SetReadDeadline(c.deadline)

	cl := &digestmd5.Client{User: c.creds.User, Password: c.creds.Password, Service: c.creds.Service, Host: "zk-sasl-md5"}
	// An empty token, not a null one: ZooKeeper reads its length.
	challenge, err := c.saslRoundTrip(saslXid, []byte{})
	if err != nil {
		return err
	}
	if len(challenge) == 0 {
		// The server has no SASL (ZooKeeper answers OK with no token):
		// the session goes on unauthenticated, as Java's client does.
		return nil
	}
	answer, err := cl.Respond(challenge)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrSASLAuthFailed, err)
	}
	final, err := c.saslRoundTrip(saslXid+1, answer)
	if err != nil {
		return err
	}
	if err := cl.Verify(final); err != nil {
		return fmt.Errorf("%w: %v", ErrSASLAuthFailed, err)
	}
	return nil
}

// saslRoundTrip sends one sasl request and returns the server's token.
func (c *saslConn) saslRoundTrip(xid int32, token []byte) ([]byte, error) {
	req := zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: xid, Type: zkproto.OpSASL}, &zkproto.GetSASLRequest{Token: token})
	if _, err := c.Conn.Write(req); err != nil {
		return nil, err
	}
	for {
		frame, err := readFrame(c.Conn)
		if err != nil {
			return nil, err
		}
		r := zkproto.NewReader(frame)
		var hdr zkproto.ReplyHeader
		hdr.Decode(r)
		if r.Err() != nil {
			return nil, r.Err()
		}
		if hdr.Xid != xid {
			continue // a notification or ping answer cannot come yet; skip anything else
		}
		if hdr.Err != zkproto.ErrOK {
			return nil, fmt.Errorf("%w as %s (ZooKeeper error %d)", ErrSASLAuthFailed, c.creds.User, hdr.Err)
		}
		var resp zkproto.SetSASLResponse
		resp.Decode(r)
		return resp.Token, r.Err()
	}
}

// readFrame reads one length-prefixed frame (at most jute.maxbuffer).
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 0xfffff+1024 {
		return nil, fmt.Errorf("ZooKeeper frame of %d bytes", n)
	}
	frame := make([]byte, n)
	_, err := io.ReadFull(r, frame)
	return frame, err
}
