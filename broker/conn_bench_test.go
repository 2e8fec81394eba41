package broker

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/zkafka/zkafka/kproto"
)

// The connection pipeline's benchmarks: requests over a loopback socket
// to a served conn (reader, handler, writer), the client in the same
// process. Besides ns/op they report the process's CPU time and its
// context switches per request (getrusage): on a machine whose cores are
// shared those move less with the load than the elapsed time does.

// BenchmarkProduceConn: the raw bench's produce (one batch of 256 records
// of 1 KiB, acks=1), 8 requests in flight.
func BenchmarkProduceConn(b *testing.B) {
	br, _ := newTestBroker(b)
	nc, _ := serveTCP(b, br)
	batch := testBatchN(256, 1024)
	req := appendRequest(nil, kproto.KeyProduce, 7, 1, produceRequestBody(7, batch))
	b.SetBytes(int64(len(batch)))
	pipelineBench(b, nc, req, 8)
}

// BenchmarkFetchConn: a consumer's fetch of 1 MiB from the segment file
// (sendfile), one in flight.
func BenchmarkFetchConn(b *testing.B) {
	br, _ := newTestBroker(b)
	nc, _ := serveTCP(b, br)
	batch := testBatchN(1000, 1024)
	roundTrip(b, nc, kproto.KeyProduce, 7, produceRequestBody(7, batch))
	req := appendRequest(nil, kproto.KeyFetch, 4, 1, fetchRequestBody(4, 0))
	b.SetBytes(int64(len(batch)))
	pipelineBench(b, nc, req, 1)
}

// pipelineBench sends req b.N times with depth in flight and reads the
// answers.
func pipelineBench(b *testing.B, nc net.Conn, req []byte, depth int) {
	b.ReportAllocs()
	r := bufio.NewReaderSize(nc, 256<<10)
	var buf []byte
	size := make([]byte, 4)
	read := func() {
		if _, err := io.ReadFull(r, size); err != nil {
			b.Fatal(err)
		}
		n := int(binary.BigEndian.Uint32(size))
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			b.Fatal(err)
		}
	}
	ru0 := rusage()
	b.ResetTimer()
	inFlight := 0
	for i := 0; i < b.N; i++ {
		if inFlight == depth {
			read()
			inFlight--
		}
		if _, err := nc.Write(req); err != nil {
			b.Fatal(err)
		}
		inFlight++
	}
	for ; inFlight > 0; inFlight-- {
		read()
	}
	b.StopTimer()
	ru1 := rusage()
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(ru1.Nvcsw+ru1.Nivcsw-ru0.Nvcsw-ru0.Nivcsw)/float64(b.N), "ctxsw/op")
}

func rusage() syscall.Rusage {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru
}
