package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The raw client sends requests encoded once (kmsg) and reads responses
// without decoding records, pipelined on one connection, so that what is
// measured is the broker.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordBatch builds a v2 record batch of n records with the value val,
// uncompressed, without a producer id (so the same bytes can be sent again
// and again), base offset 0.
func recordBatch(n int, val []byte) []byte {
	var recs []byte
	for i := range n {
		var body []byte
		body = append(body, 0)                     // attributes
		body = binary.AppendVarint(body, 0)        // timestamp delta
		body = binary.AppendVarint(body, int64(i)) // offset delta
		body = binary.AppendVarint(body, -1)       // key: null
		body = binary.AppendVarint(body, int64(len(val)))
		body = append(body, val...)
		body = binary.AppendVarint(body, 0) // headers
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	now := time.Now().UnixMilli()
	b := make([]byte, 0, 61+len(recs))
	b = binary.BigEndian.AppendUint64(b, 0)          // base offset
	b = binary.BigEndian.AppendUint32(b, 0)          // batch length, below
	b = binary.BigEndian.AppendUint32(b, ^uint32(0)) // partition leader epoch -1
	b = append(b, 2)                                 // magic
	b = binary.BigEndian.AppendUint32(b, 0)          // crc, below
	b = binary.BigEndian.AppendUint16(b, 0)          // attributes
	b = binary.BigEndian.AppendUint32(b, uint32(n-1))
	b = binary.BigEndian.AppendUint64(b, uint64(now))
	b = binary.BigEndian.AppendUint64(b, uint64(now))
	b = binary.BigEndian.AppendUint64(b, ^uint64(0)) // producer id -1
	b = binary.BigEndian.AppendUint16(b, 0xffff)     // producer epoch -1
	b = binary.BigEndian.AppendUint32(b, ^uint32(0)) // base sequence -1
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
	return b
}

// frame wraps a kmsg request body into a request frame (header v1).
func frame(req kmsg.Request, corr int32) []byte {
	b := make([]byte, 4, 64)
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len("kafkabench")))
	b = append(b, "kafkabench"...)
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// rawResult is one raw run.
type rawResult struct {
	bytes    int64 // record-batch bytes produced or fetched
	records  int64
	requests int64
	elapsed  time.Duration
	cliCPU   time.Duration
	brkCPU   time.Duration
	// firstByte is the time fetches waited from sending the request to
	// the response's first byte (the pause of one fetch in flight).
	firstByte time.Duration
}

// pipelined runs reqs requests on c with at most depth outstanding: send(i,
// buf) returns request i's frame, recv reads one response. It stops
// sending at the deadline.
func pipelined(c net.Conn, reqs, depth int, deadline time.Time, send func(i int) []byte, recv func(r *bufio.Reader) error) (int, error) {
	tokens := make(chan struct{}, depth)
	quit := make(chan struct{})
	var mu sync.Mutex
	issued, wdone := 0, false
	var werr error
	cond := sync.NewCond(&mu)
	go func() {
		defer func() {
			mu.Lock()
			wdone = true
			cond.Broadcast()
			mu.Unlock()
		}()
		for i := 0; i < reqs; i++ {
			select {
			case tokens <- struct{}{}:
			case <-quit:
				return
			}
			if time.Now().After(deadline) {
				return
			}
			if _, err := c.Write(send(i)); err != nil {
				werr = err
				return
			}
			mu.Lock()
			issued++
			cond.Broadcast()
			mu.Unlock()
		}
	}()
	r := bufio.NewReaderSize(c, 256<<10)
	done := 0
	for {
		mu.Lock()
		for done == issued && !wdone {
			cond.Wait()
		}
		finished := done == issued && wdone
		mu.Unlock()
		if finished {
			return done, werr
		}
		if err := recv(r); err != nil {
			close(quit)
			c.Close()
			return done, err
		}
		<-tokens
		done++
	}
}

// readFrame reads one response frame into buf (grown as needed).
func readFrame(r *bufio.Reader, buf []byte) ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(lb[:]))
	if n < 4 || n > 256<<20 {
		return nil, fmt.Errorf("response size %d", n)
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err := io.ReadFull(r, buf)
	return buf, err
}

// rawProduce sends the same Produce v7 request (one batch of recs records
// of val, acks) pipelined for d or until maxBytes, on conns connections at
// once: connection i to partition i of topic.
func rawProduce(addr, topic string, conns int, acks int16, recs int, val []byte, depth int, d time.Duration, maxBytes int64) (rawResult, int, error) {
	batch := recordBatch(recs, val)
	var mu sync.Mutex
	var total rawResult
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := rawProduceConn(addr, topic, int32(i), acks, batch, depth, start.Add(d), maxBytes/int64(conns))
			mu.Lock()
			defer mu.Unlock()
			total.bytes += int64(n) * int64(len(batch))
			total.records += int64(n) * int64(recs)
			total.requests += int64(n)
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}()
	}
	wg.Wait()
	total.elapsed = time.Since(start)
	return total, len(batch), firstErr
}

// rawProduceConn is one connection of rawProduce, to one partition; it
// returns the requests answered.
func rawProduceConn(addr, topic string, partition int32, acks int16, batch []byte, depth int, deadline time.Time, maxBytes int64) (int, error) {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 7, acks, 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	msg := frame(req, 0)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	// Response v7: corr, [topic: name, [partition, error_code, ...]], throttle.
	errAt := 4 + 4 + 2 + len(topic) + 4 + 4
	var buf []byte
	reqs := int(maxBytes / int64(len(batch)))
	return pipelined(c, reqs, depth, deadline, func(i int) []byte {
		binary.BigEndian.PutUint32(msg[8:], uint32(i)) // correlation id
		return msg
	}, func(r *bufio.Reader) error {
		var err error
		if buf, err = readFrame(r, buf); err != nil {
			return err
		}
		if len(buf) < errAt+2 {
			return errors.New("short produce response")
		}
		if code := int16(binary.BigEndian.Uint16(buf[errAt:])); code != 0 {
			return fmt.Errorf("produce error code %d", code)
		}
		return nil
	})
}

// rawFetch reads a partition from offset 0 to total records with Fetch v4
// requests of up to perFetch batches of batchSize bytes, one at a time (a
// fetch stops at a segment's end, so the next offset is known only from
// the response). The response is read whole into one buffer; only the
// batch headers are looked at (base offset, length, last offset delta) to
// find the next offset.
func rawFetch(addr, topic string, batchSize int, total int64, perFetch int) (rawResult, error) {
	maxBytes := int32(perFetch * batchSize)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return rawResult{}, err
	}
	defer c.Close()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 4, -1, 500, 1, maxBytes
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = maxBytes
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	var res rawResult
	var buf []byte
	r := bufio.NewReaderSize(c, 256<<10)
	// Response v4: corr, throttle, [topic: name, [partition, error_code,
	// high watermark, last stable offset, aborted txns, records]].
	errAt := 4 + 4 + 4 + 2 + len(topic) + 4 + 4
	start := time.Now()
	var next int64
	for i := int32(0); next < total; i++ {
		req.Topics[0].Partitions[0].FetchOffset = next
		if _, err := c.Write(frame(req, i)); err != nil {
			return res, err
		}
		t0 := time.Now()
		if _, err := r.Peek(4); err != nil { // the round trip's pause: request to first byte
			return res, err
		}
		res.firstByte += time.Since(t0)
		if buf, err = readFrame(r, buf); err != nil {
			return res, err
		}
		if len(buf) < errAt+2+8+8+4+4 {
			return res, errors.New("short fetch response")
		}
		if code := int16(binary.BigEndian.Uint16(buf[errAt:])); code != 0 {
			return res, fmt.Errorf("fetch error code %d", code)
		}
		p := errAt + 2 + 8 + 8
		if aborted := int32(binary.BigEndian.Uint32(buf[p:])); aborted > 0 {
			p += 16 * int(aborted)
		}
		p += 4
		n := int(int32(binary.BigEndian.Uint32(buf[p:])))
		p += 4
		if n <= 0 || p+n > len(buf) {
			return res, fmt.Errorf("fetch at %d returned %d record bytes", next, n)
		}
		recs := buf[p : p+n]
		for len(recs) >= 61 {
			l := int(binary.BigEndian.Uint32(recs[8:])) + 12
			if l > len(recs) {
				break // a partial batch at the end
			}
			last := int64(binary.BigEndian.Uint64(recs)) + int64(binary.BigEndian.Uint32(recs[23:]))
			res.records += last + 1 - next
			res.bytes += int64(l)
			next = last + 1
			recs = recs[l:]
		}
		res.requests++
	}
	res.elapsed = time.Since(start)
	return res, nil
}
