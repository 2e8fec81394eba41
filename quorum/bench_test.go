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
