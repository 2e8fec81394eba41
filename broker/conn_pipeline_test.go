package broker

import (
	"bufio"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// readProduceAnswer reads one produce response of version 7 and returns
// its correlation id, error code and base offset.
func readProduceAnswer(t *testing.T, r io.Reader) (corr int32, code int16, base int64) {
	t.Helper()
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 7
	if err := resp.ReadFrom(buf[4:]); err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	return int32(binary.BigEndian.Uint32(buf)), p.ErrorCode, p.BaseOffset
}

// TestProducePipelineReadsAhead: while a large produce request is being
// handled (held here in the request hook), the connection reads the next
// one (its buffer is charged to the request budget) but does not handle
// it; the answers come in request order with consecutive offsets, small
// requests between large ones keep their place, and a request is never
// read into the buffer of the one being handled (request 2, smaller than
// request 1, is handled slowly while request 3 is read).
func TestProducePipelineReadsAhead(t *testing.T) {
	b, _ := newTestBroker(t)
	b.budget = newRequestBudget(DefaultQueuedMaxRequestBytes, 0)
	release := make(chan struct{})
	seen := make(chan int32, 16)
	b.cfg.RequestHook = func(info RequestInfo) RequestAction {
		seen <- info.Correlated
		switch info.Correlated {
		case 1:
			<-release
		case 2: // handled while the reader reads request 3
			return RequestAction{Delay: 50 * time.Millisecond}
		}
		return RequestAction{}
	}
	nc, c := serveTCP(t, b)
	large := produceRequestBody(7, testBatchN(200, 1000))
	medium := produceRequestBody(7, testBatchN(80, 1000)) // into a smaller buffer than large's
	small := produceRequestBody(7, testBatchN(2, 100))
	var reqs []byte
	for i, body := range [][]byte{large, medium, large, small, large} {
		reqs = appendRequest(reqs, kproto.KeyProduce, 7, int32(i+1), body)
	}
	go nc.Write(reqs)
	if got := <-seen; got != 1 {
		t.Fatalf("first request handled: %d", got)
	}
	checkFor(t, "the second request is read while the first is handled", func() bool {
		return c.acct.heldNow() >= int64(len(large)+len(medium))
	})
	select {
	case got := <-seen:
		t.Fatalf("request %d handled before request 1 was answered", got)
	default:
	}
	close(release)
	r := bufio.NewReader(nc)
	var next int64
	for i, records := range []int64{200, 80, 200, 2, 200} {
		corr, code, base := readProduceAnswer(t, r)
		if corr != int32(i+1) || code != 0 || base != next {
			t.Fatalf("answer %d: correlation %d, error %d, base offset %d; want %d, 0, %d", i, corr, code, base, i+1, next)
		}
		next += records
	}
	for i := int32(2); i <= 5; i++ {
		if got := <-seen; got != i {
			t.Fatalf("handled request %d, want %d", got, i)
		}
	}
}

// TestProducePipelineHandlerFails: a request the handler goroutine fails
// (a bad request body) closes the connection, as on the reader.
func TestProducePipelineHandlerFails(t *testing.T) {
	b, _ := newTestBroker(t)
	nc, _ := serveTCP(t, b)
	bad := make([]byte, pipelineMinBytes+100) // not a produce body: topics count far too large
	for i := range bad {
		bad[i] = 0x7f
	}
	req := appendRequest(nil, kproto.KeyProduce, 7, 1, bad)
	if _, err := nc.Write(req); err != nil {
		t.Fatal(err)
	}
	var one [1]byte
	if _, err := nc.Read(one[:]); err == nil {
		t.Fatal("the connection answered a malformed produce request")
	}
}

// TestProducePipelineCorruptBatch: a large produce whose batch fails its
// CRC is answered CORRUPT_MESSAGE between good ones, whether its check
// ran early on the reader or on the handler, and appends nothing.
func TestProducePipelineCorruptBatch(t *testing.T) {
	b, _ := newTestBroker(t)
	nc, _ := serveTCP(t, b)
	good := produceRequestBody(7, testBatchN(200, 1000))
	bad := produceRequestBody(7, testBatchN(200, 1000))
	bad[len(bad)-10] ^= 0xff // in the last record: the CRC fails
	var reqs []byte
	for i, body := range [][]byte{good, bad, good, bad, good} {
		reqs = appendRequest(reqs, kproto.KeyProduce, 7, int32(i+1), body)
	}
	go nc.Write(reqs)
	r := bufio.NewReader(nc)
	for i, want := range []struct {
		code int16
		base int64
	}{{0, 0}, {2, -1}, {0, 200}, {2, -1}, {0, 400}} {
		corr, code, base := readProduceAnswer(t, r)
		if corr != int32(i+1) || code != want.code || base != want.base {
			t.Fatalf("answer %d: correlation %d, error %d, base offset %d; want %d, %d, %d", i, corr, code, base, i+1, want.code, want.base)
		}
	}
}
