package broker

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/zkafka/zkafka/kproto"
)

// serveTCP serves one loopback connection of b and returns the client end
// and the server's conn.
func serveTCP(t testing.TB, b *Broker) (net.Conn, *conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := newConn(b, server)
	b.trackConn(c, true)
	if !b.goTracked("kafka-conn", c.serve) {
		t.Fatal("not serving")
	}
	return client, c
}

// roundTrip sends one request and reads its response frame.
func roundTrip(t testing.TB, nc net.Conn, key, version int16, body []byte) []byte {
	t.Helper()
	hdr := kproto.RequestHeader{APIKey: key, APIVersion: version, CorrelationID: 7, HeaderVersion: 1}
	req := kproto.AppendRequestHeader(make([]byte, 4), &hdr)
	req = append(req, body...)
	binary.BigEndian.PutUint32(req, uint32(len(req)-4))
	if _, err := nc.Write(req); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		t.Fatal(err)
	}
	resp := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(nc, resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestConnBufferShrinksWhenIdle: a request larger than the base buffer
// grows the connection's buffer from the budget; the buffer is kept for
// the next requests, and given back once the connection is idle for
// keptFrameIdle, after which the connection still serves.
func TestConnBufferShrinksWhenIdle(t *testing.T) {
	b, _ := newTestBroker(t)
	b.budget = newRequestBudget(DefaultQueuedMaxRequestBytes, 0)
	nc, c := serveTCP(t, b)
	body := produceRequestBody(7, testBatchN(900, 1000))
	roundTrip(t, nc, kproto.KeyProduce, 7, body)
	held := c.acct.heldNow()
	if held < int64(len(body)) {
		t.Fatalf("after a %d-byte request the connection holds %d budget bytes", len(body), held)
	}
	roundTrip(t, nc, kproto.KeyProduce, 7, body) // kept: no new charge
	if c.acct.heldNow() != held {
		t.Fatalf("second request: held %d, was %d", c.acct.heldNow(), held)
	}
	checkFor(t, "the idle connection gives its buffer back", func() bool { return c.acct.heldNow() == 0 })
	// The pool has it, and the smaller buffers it grew through.
	if used, pooled := b.budget.stats(); used != pooled || pooled < held {
		t.Fatalf("budget: used %d pooled %d, want the buffer (%d) in the pool", used, pooled, held)
	}
	roundTrip(t, nc, kproto.KeyApiVersions, 0, nil)
	nc.Close()
	done := make(chan struct{})
	go func() { b.goroutines.Wait(context.Background()); close(done) }()
	checkFor(t, "the connection ends", func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
}
