package quorum

import (
	"io"
	"log/slog"
	"testing"

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
