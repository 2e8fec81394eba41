package quorum

import (
	"bytes"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// BenchmarkPipelineGetData measures the request pipeline alone (no raft,
// no disk, net.Pipe): b.N getData requests of one session, pipelined 100
// at a time, each reply read and decoded.
//
//	go test -run '^$' -bench PipelineGetData ./quorum/
func BenchmarkPipelineGetData(b *testing.B) {
	s := newServer(DefaultConfig(b.TempDir()), slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	s.tree.Store(znode.New(s.treeOptions()))
	(&fakeLog{}).join(s)
	b.Cleanup(func() { s.Close() })
	c := dial(b, s)
	if _, ok := c.connect(zkproto.ConnectRequest{TimeOut: 6000, Passwd: make([]byte, 16)}); !ok {
		b.Fatal("no session")
	}
	c.send(1, zkproto.OpCreate, &zkproto.CreateRequest{Path: "/x", Data: make([]byte, 100), ACL: zkproto.OpenACLUnsafe})
	c.next(1, waitLimit)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(100, b.N-done)
		for i := range n {
			c.send(int32(2+i), zkproto.OpGetData, &zkproto.GetDataRequest{Path: "/x"})
		}
		if got := c.next(n, waitLimit); len(got) != n {
			b.Fatalf("got %d replies, want %d", len(got), n)
		}
		done += n
	}
}

// BenchmarkGetDataTCP measures one session's getData round trips on a real
// socket, one request outstanding, as a latency-bound client sends them
// (the reader answers each itself: no hand-off, no allocation).
//
//	go test -run '^$' -bench GetDataTCP -benchmem ./quorum/
func BenchmarkGetDataTCP(b *testing.B) {
	s := startPlainServer(b, nil)
	setup := dialRawSession(b, s.Addr().String())
	setup.nc.Write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: 1, Type: zkproto.OpCreate},
		&zkproto.CreateRequest{Path: "/x", Data: make([]byte, 100), ACL: zkproto.OpenACLUnsafe}))
	if h, _ := setup.reply(); h.Err != zkproto.ErrOK {
		b.Fatalf("create: %v", h.Err)
	}
	c := dialRawSession(b, s.Addr().String())
	frame := getDataFrame(nil, 1, "/x", false)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.nc.Write(frame); err != nil {
			b.Fatal(err)
		}
		if h, _ := c.reply(); h.Err != zkproto.ErrOK {
			b.Fatalf("getData: %v", h.Err)
		}
	}
}

// BenchmarkCreateTCP measures one session's creates of 100-byte znodes on
// a real socket against a standalone server with its raft log on disk, one
// request outstanding. allocs/op counts the whole process, but the client
// side allocates nothing: each frame is the same one with its path's digits
// rewritten in place.
//
//	go test -run '^$' -bench 'CreateTCP|SetDataTCP' -benchmem ./quorum/
func BenchmarkCreateTCP(b *testing.B) { benchWrites(b, 1, createFrames) }

// BenchmarkCreateTCPPipelined is BenchmarkCreateTCP with 100 creates
// outstanding, so that the server's CPU per request dominates rather than
// the round trip and the log's sync.
func BenchmarkCreateTCPPipelined(b *testing.B) { benchWrites(b, 100, createFrames) }

// BenchmarkSetDataTCP measures one session's setData of 100 bytes on one
// znode, one request outstanding, as BenchmarkCreateTCP.
func BenchmarkSetDataTCP(b *testing.B) { benchWrites(b, 1, setFrames) }

// BenchmarkSetDataTCPPipelined is BenchmarkSetDataTCP with 100 requests
// outstanding.
func BenchmarkSetDataTCPPipelined(b *testing.B) { benchWrites(b, 100, setFrames) }

// writeFrames returns the frames of one window of window write requests and
// a function that makes them the next window's (new paths for creates).
type writeFrames func(b *testing.B, c *pipeSession, window int) (frames []byte, next func())

// benchWrites runs b.N write requests of one session in windows of window
// outstanding requests, each reply checked for ErrOK.
func benchWrites(b *testing.B, window int, frames writeFrames) {
	s := startPlainServer(b, nil)
	c := dialRawSession(b, s.Addr().String())
	buf, next := frames(b, c, window)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += window {
		c.nc.SetDeadline(time.Now().Add(waitLimit))
		if _, err := c.nc.Write(buf); err != nil {
			b.Fatal(err)
		}
		for range window {
			if h, _ := c.reply(); h.Err != zkproto.ErrOK {
				b.Fatalf("write: %v", h.Err)
			}
		}
		next()
	}
}

// createDigits is the width of the counter in a create's path /c/<digits>.
const createDigits = 10

// createFrames makes /c and returns window create frames of /c/<n>, n
// counting up from 0 across windows.
func createFrames(b *testing.B, c *pipeSession, window int) ([]byte, func()) {
	mustWrite(b, c, zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: 1, Type: zkproto.OpCreate},
		&zkproto.CreateRequest{Path: "/c", ACL: zkproto.OpenACLUnsafe}))
	var buf []byte
	var at []int // where each frame's digits start
	for i := range window {
		path := "/c/" + strings.Repeat("0", createDigits)
		buf = zkproto.AppendRequest(buf, zkproto.RequestHeader{Xid: int32(2 + i), Type: zkproto.OpCreate},
			&zkproto.CreateRequest{Path: path, Data: make([]byte, 100), ACL: zkproto.OpenACLUnsafe})
		at = append(at, bytes.LastIndex(buf, []byte(path))+3)
	}
	n := 0
	number := func() {
		var scratch [20]byte
		for _, p := range at {
			digits := strconv.AppendInt(scratch[:0], int64(n), 10)
			pad := createDigits - len(digits)
			copy(buf[p:p+pad], strings.Repeat("0", pad))
			copy(buf[p+pad:], digits)
			n++
		}
	}
	number()
	return buf, number
}

// setFrames makes /x and returns window setData frames of it.
func setFrames(b *testing.B, c *pipeSession, window int) ([]byte, func()) {
	mustWrite(b, c, zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: 1, Type: zkproto.OpCreate},
		&zkproto.CreateRequest{Path: "/x", ACL: zkproto.OpenACLUnsafe}))
	var buf []byte
	for i := range window {
		buf = setDataFrame(buf, int32(2+i), "/x", make([]byte, 100))
	}
	return buf, func() {}
}

// mustWrite sends one request frame and fails b unless its reply is ErrOK.
func mustWrite(b *testing.B, c *pipeSession, frame []byte) {
	if _, err := c.nc.Write(frame); err != nil {
		b.Fatal(err)
	}
	if h, _ := c.reply(); h.Err != zkproto.ErrOK {
		b.Fatalf("setup: %v", h.Err)
	}
}
