package broker

import (
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/zkafka/zkafka/kproto"
)

// TestSmallResponsesWrittenByReader: answers to requests sent one at a
// time are written by the reader goroutine, without a hand-off to the
// writer: small ones, and a fetch with records from the file (sendfile)
// when no request is behind it.
func TestSmallResponsesWrittenByReader(t *testing.T) {
	b, _ := newTestBroker(t)
	nc, c := serveTCP(t, b)
	body := produceRequestBody(7, testBatch(10))
	const n = 20
	for range n {
		resp := roundTrip(t, nc, kproto.KeyProduce, 7, body)
		if code := produceErrorCode(resp); code != 0 {
			t.Fatalf("produce error %d", code)
		}
	}
	if got := c.inlineResponses.Load(); got != n {
		t.Fatalf("%d of %d produce responses written by the reader, want all", got, n)
	}
	resp := roundTrip(t, nc, kproto.KeyFetch, 4, fetchRequestBody(4, 0))
	if len(resp) < n*len(testBatch(10)) {
		t.Fatalf("fetch answered %d bytes, want the %d batches", len(resp), n)
	}
	if got := c.inlineResponses.Load(); got != n+1 {
		t.Fatalf("the fetch was not written by the reader (%d inline responses)", got)
	}
}

// TestResponsesInOrderBehindFetch: a fetch answered with records from the
// segment file (queued to the writer, sendfile) followed at once by small
// requests on the same connection: the small answers must not overtake
// it, whichever goroutine writes them.
func TestResponsesInOrderBehindFetch(t *testing.T) {
	b, _ := newTestBroker(t)
	nc, c := serveTCP(t, b)
	// 1 MiB of records, so that the fetch takes a while to send.
	big := produceRequestBody(7, testBatchN(1000, 1000))
	roundTrip(t, nc, kproto.KeyProduce, 7, big)
	small := produceRequestBody(7, testBatch(1))
	for round := range 5 {
		var reqs []byte
		reqs = appendRequest(reqs, kproto.KeyFetch, 4, 100, fetchRequestBody(4, 0))
		for i := range 10 {
			reqs = appendRequest(reqs, kproto.KeyProduce, 7, int32(101+i), small)
			reqs = appendRequest(reqs, kproto.KeyApiVersions, 0, int32(1001+i), nil)
		}
		if _, err := nc.Write(reqs); err != nil {
			t.Fatal(err)
		}
		want := []int32{100}
		for i := range 10 {
			want = append(want, int32(101+i), int32(1001+i))
		}
		for _, corr := range want {
			if got := readCorrelation(t, nc); got != corr {
				t.Fatalf("round %d: response with correlation id %d, want %d", round, got, corr)
			}
		}
	}
	if c.inlineResponses.Load() == 0 {
		t.Fatal("no response was written by the reader")
	}
}

func appendRequest(dst []byte, key, version int16, corr int32, body []byte) []byte {
	hdr := kproto.RequestHeader{APIKey: key, APIVersion: version, CorrelationID: corr, HeaderVersion: 1}
	at := len(dst)
	dst = kproto.AppendRequestHeader(append(dst, 0, 0, 0, 0), &hdr)
	dst = append(dst, body...)
	binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// readCorrelation reads one response frame and returns its correlation id.
func readCorrelation(t *testing.T, nc net.Conn) int32 {
	t.Helper()
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		t.Fatal(err)
	}
	resp := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(nc, resp); err != nil {
		t.Fatal(err)
	}
	return int32(binary.BigEndian.Uint32(resp))
}

// produceErrorCode is the first partition's error code of a Produce v7
// response to topic "t".
func produceErrorCode(resp []byte) int16 {
	at := 4 + 4 + 2 + 1 + 4 + 4 // corr, topics, name "t", partitions, partition
	return int16(binary.BigEndian.Uint16(resp[at:]))
}
