package kafkago

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// rawConn speaks the Kafka protocol by hand, for requests kgo would not
// send (duplicates, corrupt batches, oversize frames).
type rawConn struct {
	t    testing.TB
	nc   net.Conn
	br   *bufio.Reader
	corr int32
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// send writes req (at its set version) and returns the correlation id.
func (c *rawConn) send(req kmsg.Request) int32 {
	c.t.Helper()
	c.corr++
	h := kproto.RequestHeader{APIKey: req.Key(), APIVersion: req.GetVersion(), CorrelationID: c.corr,
		ClientID: []byte("raw")}
	h.HeaderVersion = kproto.RequestHeaderVersion(h.APIKey, h.APIVersion, kproto.IsFlexible)
	buf, start := kproto.BeginFrame(nil)
	buf = kproto.AppendRequestHeader(buf, &h)
	buf = req.AppendTo(buf)
	kproto.EndFrame(buf, start, 0)
	c.write(buf)
	return c.corr
}

func (c *rawConn) write(b []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// readFrame reads one response frame body.
func (c *rawConn) readFrame(timeout time.Duration) ([]byte, error) {
	c.nc.SetReadDeadline(time.Now().Add(timeout))
	var size [4]byte
	if _, err := io.ReadFull(c.br, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err := io.ReadFull(c.br, body)
	return body, err
}

// roundTrip sends req and decodes its response.
func (c *rawConn) roundTrip(req kmsg.Request) kmsg.Response {
	c.t.Helper()
	corr := c.send(req)
	body, err := c.readFrame(10 * time.Second)
	if err != nil {
		c.t.Fatalf("reading %s response: %v", kmsg.NameForKey(req.Key()), err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		c.t.Fatalf("correlation id %d, want %d", got, corr)
	}
	body = body[4:]
	if req.Key() != kproto.KeyApiVersions && kproto.IsFlexible(req.Key(), req.GetVersion()) {
		body = body[1:] // empty header tags
	}
	resp := req.ResponseKind()
	if err := resp.ReadFrom(body); err != nil {
		c.t.Fatalf("decoding %s response: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// closed reports whether the server closed the connection (within 5 s).
func (c *rawConn) closed() bool {
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.br.ReadByte()
	return err == io.EOF
}
