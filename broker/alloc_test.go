package broker

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// allocConn is a conn for calling handlers directly.
func allocConn(b *Broker) *conn {
	return &conn{b: b, log: b.log, out: make(chan *response, 16), writerGone: make(chan struct{})}
}

func produceRequestBody(version int16, batch []byte) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, 1, 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req.AppendTo(nil)
}

func fetchRequestBody(version int16, offset int64) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.MinBytes = version, -1, 1<<20, 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rp.FetchOffset = offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req.AppendTo(nil)
}

// TestProduceFetchAllocs pins the allocations of one Produce and one
// Fetch (with data) of one partition, handler to response.
func TestProduceFetchAllocs(t *testing.T) {
	b, _ := newTestBroker(t)
	c := allocConn(b)
	batch := testBatch(1000)
	for _, v := range []int16{3, 7, 9} {
		body := produceRequestBody(v, batch)
		hdr := kproto.RequestHeader{APIKey: kproto.KeyProduce, APIVersion: v, CorrelationID: 1}
		run := func() {
			resp, err := handleProduce(c, &hdr, body)
			if err != nil || resp == nil {
				t.Fatal(err)
			}
			resp.release()
		}
		run()
		allocs := testing.AllocsPerRun(200, run)
		t.Logf("produce v%d: %.1f allocs", v, allocs)
		if allocs > maxProduceAllocs {
			t.Errorf("produce v%d: %.1f allocs per request, want at most %d", v, allocs, maxProduceAllocs)
		}
	}
	for _, v := range []int16{4, 11, 12} {
		body := fetchRequestBody(v, 0)
		hdr := kproto.RequestHeader{APIKey: kproto.KeyFetch, APIVersion: v, CorrelationID: 1}
		run := func() {
			resp, err := handleFetch(c, &hdr, body)
			if err != nil || resp == nil || len(resp.ranges) != 1 {
				t.Fatal(err)
			}
			resp.release()
		}
		run()
		allocs := testing.AllocsPerRun(200, run)
		t.Logf("fetch v%d: %.1f allocs", v, allocs)
		if allocs > maxFetchAllocs {
			t.Errorf("fetch v%d: %.1f allocs per request, want at most %d", v, allocs, maxFetchAllocs)
		}
	}
}

const (
	maxProduceAllocs = 0
	maxFetchAllocs   = 0
)

// BenchmarkProduceHandler is the raw bench's produce request (one batch of
// 256 records of 1 KiB) through handleProduce: decode, validate, append
// (one pwrite) and the response; no socket.
func BenchmarkProduceHandler(b *testing.B) {
	br, _ := newTestBroker(b)
	c := allocConn(br)
	batch := testBatchN(256, 1024)
	body := produceRequestBody(7, batch)
	hdr := kproto.RequestHeader{APIKey: kproto.KeyProduce, APIVersion: 7, CorrelationID: 1}
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := handleProduce(c, &hdr, body)
		if err != nil || resp == nil {
			b.Fatal(err)
		}
		resp.release()
	}
}

// testBatchN builds an uncompressed batch of n records of size bytes each.
func testBatchN(n, size int) []byte {
	var recs []byte
	for i := range n {
		var r []byte
		r = append(r, 0)
		r = binary.AppendVarint(r, 0)
		r = binary.AppendVarint(r, int64(i))
		r = binary.AppendVarint(r, -1)
		r = binary.AppendVarint(r, int64(size))
		r = append(r, make([]byte, size)...)
		r = binary.AppendVarint(r, 0)
		recs = binary.AppendVarint(recs, int64(len(r)))
		recs = append(recs, r...)
	}
	b := make([]byte, 61, 61+len(recs))
	binary.BigEndian.PutUint32(b[8:], uint32(49+len(recs)))
	b[16] = 2
	binary.BigEndian.PutUint32(b[23:], uint32(n-1))
	binary.BigEndian.PutUint64(b[43:], ^uint64(0)) // producer id -1
	binary.BigEndian.PutUint16(b[51:], 0xffff)
	binary.BigEndian.PutUint32(b[53:], 0xffffffff)
	binary.BigEndian.PutUint32(b[57:], uint32(n))
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// TestConnRequestAllocs pins the allocations of a whole request over a
// loopback socket (read, header, handler, response write): a produce
// allocates nothing, a fetch only what sendfile's descriptor plumbing in
// store/segment takes.
func TestConnRequestAllocs(t *testing.T) {
	b, _ := newTestBroker(t)
	nc, _ := serveTCP(t, b)
	produce := appendRequest(nil, kproto.KeyProduce, 7, 1, produceRequestBody(7, testBatch(100)))
	// Large enough for the handler goroutine (conn_pipeline.go).
	largeProduce := appendRequest(nil, kproto.KeyProduce, 7, 1, produceRequestBody(7, testBatchN(256, 1024)))
	fetch := appendRequest(nil, kproto.KeyFetch, 4, 2, fetchRequestBody(4, 0))
	buf := make([]byte, 1<<20)
	roundTrip := func(req []byte) func() {
		return func() {
			if _, err := nc.Write(req); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(nc, buf[:4]); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(nc, buf[:binary.BigEndian.Uint32(buf)]); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name string
		req  []byte
		max  float64
	}{{"produce", produce, 0}, {"large produce", largeProduce, 0}, {"fetch", fetch, maxConnFetchAllocs}} {
		run := roundTrip(c.req)
		run()
		if allocs := testing.AllocsPerRun(200, run); allocs > c.max {
			t.Errorf("%s over a socket: %.1f allocs per request, want at most %.0f", c.name, allocs, c.max)
		}
	}
}

// maxConnFetchAllocs: segment.sendFile's closures and the file's RawConn.
const maxConnFetchAllocs = 4

// TestParkedFetchAllocs: a consumer's fetch at the log end parks (long
// poll) and answers empty at max_wait without allocating: the wake-up
// channel, timer and parked list are the connection's.
func TestParkedFetchAllocs(t *testing.T) {
	b, _ := newTestBroker(t)
	c := allocConn(b)
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 4, -1, 1<<20, 1, 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	body := req.AppendTo(nil)
	hdr := kproto.RequestHeader{APIKey: kproto.KeyFetch, APIVersion: 4, CorrelationID: 1}
	run := func() {
		resp, err := handleFetch(c, &hdr, body)
		if err != nil || resp == nil || len(resp.ranges) != 0 {
			t.Fatal(err)
		}
		resp.release()
	}
	run()
	if allocs := testing.AllocsPerRun(50, run); allocs > 0 {
		t.Errorf("parked fetch: %.1f allocs per request, want 0", allocs)
	}
}
