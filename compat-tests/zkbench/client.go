package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/zkafka/zkafka/zkproto"
)

// client is a raw ZooKeeper session on zkproto: no watches, no pings (the
// benchmark's sessions are busy far more often than their timeout), and
// either one request at a time (do) or a pipelined window (pipeline). It
// costs the load generator a fraction of what go-zookeeper's per-request
// channels and goroutines do, which matters with server and client on
// the same two cores.
type client struct {
	nc  net.Conn
	br  *bufio.Reader
	bw  *bufio.Writer
	xid int32
	out []byte
	in  []byte
}

func dial(addr string, timeout time.Duration) (*client, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	c := &client{nc: nc, br: bufio.NewReaderSize(nc, 64<<10), bw: bufio.NewWriterSize(nc, 64<<10)}
	nc.SetDeadline(time.Now().Add(timeout))
	req := zkproto.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16), HasReadOnly: true}
	c.bw.Write(zkproto.AppendFrame(nil, &req))
	if err := c.bw.Flush(); err != nil {
		nc.Close()
		return nil, err
	}
	body, err := zkproto.ReadFrame(c.br, nil, zkproto.MaxBuffer)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("handshake: %w", err)
	}
	var resp zkproto.ConnectResponse
	r := zkproto.NewReader(body)
	resp.Decode(r)
	if r.Err() != nil || resp.TimeOut <= 0 {
		nc.Close()
		return nil, fmt.Errorf("handshake refused (timeout %d, %v)", resp.TimeOut, r.Err())
	}
	nc.SetDeadline(time.Time{})
	return c, nil
}

// readReply reads the next reply that is not a notification or ping and
// returns its header and body.
func (c *client) readReply() (zkproto.ReplyHeader, []byte, error) {
	for {
		body, err := zkproto.ReadFrame(c.br, c.in, zkproto.MaxBuffer)
		if err != nil {
			return zkproto.ReplyHeader{}, nil, err
		}
		c.in = body[:0]
		if len(body) < zkproto.ReplyHeaderSize {
			return zkproto.ReplyHeader{}, nil, fmt.Errorf("short reply (%d bytes)", len(body))
		}
		h := zkproto.ReplyHeader{
			Xid:  int32(binary.BigEndian.Uint32(body)),
			Zxid: int64(binary.BigEndian.Uint64(body[4:])),
			Err:  zkproto.Err(int32(binary.BigEndian.Uint32(body[12:]))),
		}
		if h.Xid == zkproto.XidNotification || h.Xid == zkproto.XidPing {
			continue
		}
		return h, body[zkproto.ReplyHeaderSize:], nil
	}
}

// do sends one request and waits for its reply.
func (c *client) do(op zkproto.OpCode, rec zkproto.Record) (zkproto.Err, error) {
	c.xid++
	c.out = zkproto.AppendRequest(c.out[:0], zkproto.RequestHeader{Xid: c.xid, Type: op}, rec)
	if _, err := c.nc.Write(c.out); err != nil {
		return 0, err
	}
	h, _, err := c.readReply()
	if err != nil {
		return 0, err
	}
	if h.Xid != c.xid {
		return 0, fmt.Errorf("reply xid %d, want %d", h.Xid, c.xid)
	}
	return h.Err, nil
}

// pipeline sends up to n requests built by next, with at most window
// outstanding, until deadline, and returns how many were answered without
// an error other than the ones ok accepts, and the first failure.
func (c *client) pipeline(n, window int, deadline time.Time, next func(i int, dst []byte) []byte, ok func(zkproto.Err) bool) (int, error) {
	tokens := make(chan struct{}, window)
	quit := make(chan struct{})
	wdone := make(chan struct{})
	var issued atomic.Int64
	var werr error
	go func() {
		defer close(wdone)
		var buf []byte
		flush := func() bool {
			if len(buf) == 0 {
				return true
			}
			_, werr = c.nc.Write(buf)
			buf = buf[:0]
			return werr == nil
		}
		for i := 0; i < n; i++ {
			select {
			case tokens <- struct{}{}:
			default:
				// The window is full: send what is buffered, then wait.
				if !flush() {
					return
				}
				select {
				case tokens <- struct{}{}:
				case <-quit:
					return
				}
			}
			if i%128 == 0 && time.Now().After(deadline) {
				break
			}
			buf = next(i, buf)
			issued.Add(1)
			if len(buf) >= 32<<10 && !flush() {
				return
			}
		}
		flush()
	}()
	done := 0
	var rerr error
	for {
		if int64(done) == issued.Load() {
			select {
			case <-wdone:
				if int64(done) == issued.Load() {
					if rerr == nil {
						rerr = werr
					}
					return done, rerr
				}
			case <-time.After(100 * time.Microsecond):
			}
			continue
		}
		h, _, err := c.readReply()
		if err == nil && h.Err != zkproto.ErrOK && !ok(h.Err) {
			err = fmt.Errorf("reply error %v", h.Err)
		}
		if err != nil {
			close(quit)
			c.nc.Close() // unblocks a writer inside Write
			<-wdone
			return done, err
		}
		<-tokens
		done++
	}
}

func (c *client) close() {
	c.nc.SetDeadline(time.Now().Add(2 * time.Second))
	c.do(zkproto.OpCloseSession, nil)
	c.nc.Close()
}
