package broker

import (
	"runtime/debug"
	"time"

	"github.com/zkafka/zkafka/kproto"
)

// The produce pipeline of a connection. A producer that keeps several
// requests in flight on one connection would otherwise get them read and
// appended one after the other, at 1/(1/read + 1/append) of the bytes per
// second; so a large produce request is handed to a second goroutine of
// the connection (handleLoop), which decodes, validates, appends and
// answers it, while the reader reads the next request. The reader then
// waits for that handler before it does anything with the next request
// (awaitHandler): requests are still handled one at a time and in order,
// and their responses leave in order. So at most one request is read
// ahead of the one being handled; a quota's mute delays the handling of
// that one (and the reading of the one after it), and its buffer is
// charged to the request budget like any other. The reader also checks
// the batches of the request it read (CRC, records: prevalidate) while
// the handler appends the one before, so that the handler, the slower
// stage, only appends. Smaller requests and
// every other API are handled by the reader itself, as before: a hand-off
// is a goroutine wake-up each way, worth it only when the append is long.

// pipelineMinBytes is the smallest produce request that is handed to the
// handler goroutine: the ones read into a charged buffer (a 64 KiB append
// takes some 30 µs, a wake-up each way a few).
const pipelineMinBytes = baseFrameBytes

// pipeline is the state of a connection's handler goroutine. The reader
// owns the fields but cur and returned, which are the handler's.
type pipeline struct {
	jobs chan pipelineJob // to the handler; closed when the reader ends
	// back carries a job's buffer back to the reader as soon as its
	// handler returned (nothing refers to a frame after that, doc.go),
	// before the answer is written: so when a client with one request in
	// flight sends the next, its buffer is back and is read into again.
	back chan []byte
	// done says that the job's answer was sent (false: the connection is
	// closing), one per job.
	done    chan bool
	started bool
	busy    bool   // a job's done is still to be received
	out     bool   // a job's buffer is still to come back
	failed  bool   // a done said false
	spare   []byte // the buffer that is not c.buf, nil when out or none

	cur      pipelineJob // the job being handled (handler goroutine)
	returned bool        // cur.buf went back (handler goroutine)

	// Early validation (prevalidate, reader goroutine): the next request's
	// header and decoded body, the decompression scratch, and per
	// partition whether its batch passed kproto.ValidateBatch, in two
	// slices used in turn (one may be the job's that is out).
	hdr        kproto.RequestHeader
	pre        kproto.ProduceRequest
	preScratch []byte
	valid      [2][]bool
	vi         int
}

// pipelineJob is a request for the handler: the header is in c.hdr, body
// is in buf (the frame's buffer).
type pipelineJob struct {
	buf, body []byte
	size      int    // frame size, for the quota
	valid     []bool // from prevalidate, or nil
}

// handOff gives the request in c.buf to the handler goroutine if it is a
// produce request worth it, and makes the spare buffer c.buf for the next
// read. false: the reader handles it itself. The handler must be idle
// (awaitHandler).
func (c *conn) handOff(hdr *kproto.RequestHeader, frame, body []byte, valid []bool) bool {
	if hdr.APIKey != kproto.KeyProduce || len(frame) < pipelineMinBytes {
		return false
	}
	p := &c.pipe
	if !p.started {
		p.jobs, p.back, p.done = make(chan pipelineJob, 1), make(chan []byte, 1), make(chan bool, 1)
		if !c.b.goTracked("kafka-conn-handler", c.handleLoop) {
			return false
		}
		p.started = true
	}
	p.jobs <- pipelineJob{buf: c.buf, body: body, size: len(frame), valid: valid}
	p.busy, p.out = true, true
	c.buf, p.spare = p.spare, nil
	if c.buf == nil {
		c.buf = make([]byte, 0, baseFrameBytes)
	}
	return true
}

// prevalidate checks the batches of a request that handOff will take,
// on the reader while the handler still appends the one before: the
// batch of each partition (the one batch producePartition would take)
// gets kproto.ValidateBatch, its CRC and record walk, so the handler,
// the slower stage, skips it for those that passed (c.validated); the
// others it validates again, answering as without this. nil: nothing
// checked (not such a request, or a SASL connection, whose frames are
// authenticated first). Reader goroutine, before awaitHandler.
func (c *conn) prevalidate(frame []byte) []bool {
	p := &c.pipe
	if c.sasl != nil || len(frame) < pipelineMinBytes {
		return nil
	}
	var body []byte
	var err error
	p.hdr, body, err = kproto.ParseRequestHeader(frame, nil)
	if err != nil || p.hdr.APIKey != kproto.KeyProduce || p.pre.Decode(p.hdr.APIVersion, body) != nil {
		return nil
	}
	p.vi ^= 1
	v := p.valid[p.vi][:0]
	for i := range p.pre.Topics {
		for j := range p.pre.Topics[i].Partitions {
			v = append(v, p.validBatch(p.pre.Topics[i].Partitions[j].Records))
		}
	}
	p.valid[p.vi] = v
	if cap(p.preScratch) > 16<<20 {
		p.preScratch = nil
	}
	return v
}

// validBatch reports whether records is one record batch of magic 2
// that passes kproto.ValidateBatch.
func (p *pipeline) validBatch(records []byte) bool {
	it := kproto.SplitBatches(records)
	batch, ok := it.Next()
	if !ok || batch.Magic() < 2 {
		return false
	}
	if _, more := it.Next(); more || it.Err() != nil {
		return false
	}
	var err error
	p.preScratch, err = kproto.ValidateBatch(batch, p.preScratch[:0])
	return err == nil
}

// reclaimBuffer takes the handed-off buffer back if the handler is done
// with it; wait: wait for that (after a frame was read into c.buf, which
// then stays c.buf). Before a read (!wait) the larger of the two buffers
// becomes c.buf, the other the spare. An oversized one goes back to the
// budget.
func (c *conn) reclaimBuffer(wait bool) {
	p := &c.pipe
	if !p.out {
		return
	}
	var buf []byte
	if wait {
		buf = <-p.back
	} else {
		select {
		case buf = <-p.back:
		default:
			return
		}
	}
	p.out = false
	if !wait && cap(buf) > cap(c.buf) {
		buf, c.buf = c.buf, buf
	}
	if cap(buf) > maxKeptFrameBytes {
		c.acct.put(buf)
		buf = nil
	}
	p.spare = buf
}

// awaitHandler waits until the handler has answered the request handed
// to it, if any, and has its buffer back. false: the handler failed and
// the connection is closing.
func (c *conn) awaitHandler() bool {
	p := &c.pipe
	if p.busy {
		p.failed = !<-p.done || p.failed
		p.busy = false
	}
	c.reclaimBuffer(true)
	return !p.failed
}

// endPipeline waits for the handler, stops it and gives the spare buffer
// back. Reader goroutine, when it stops.
func (c *conn) endPipeline() {
	c.awaitHandler()
	p := &c.pipe
	if p.started {
		close(p.jobs)
	}
	c.acct.put(p.spare)
	p.spare = nil
}

// handleLoop is the handler goroutine: it handles the requests the reader
// hands it, one at a time.
func (c *conn) handleLoop() {
	p := &c.pipe
	for j := range p.jobs {
		p.cur, p.returned = j, false
		ok := c.handleHandedOff()
		p.giveBack() // if a panic came before
		p.cur = pipelineJob{}
		p.done <- ok
	}
}

// giveBack sends the current job's buffer back to the reader, once.
// Handler goroutine.
func (p *pipeline) giveBack() {
	if !p.returned {
		p.returned = true
		p.back <- p.cur.buf
	}
}

// handleHandedOff handles the current job on the handler goroutine; on a
// failure (or a panic) it closes the socket, which stops the reader.
func (c *conn) handleHandedOff() (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic handling a request; closing the connection", "panic", r, "stack", string(debug.Stack()))
			ok = false
		}
		if !ok {
			c.nc.Close()
		}
	}()
	c.validated = c.pipe.cur.valid
	defer func() { c.validated = nil }()
	// more: the reader is reading the next request meanwhile, so a large
	// answer goes to the writer (send).
	return c.handle(&c.hdr, c.pipe.cur.body, c.pipe.cur.size, true, true)
}

// handle dispatches one request and sends its answer, then mutes the
// connection if the client is over its quota. size is the frame's; more
// as for send; handedOff: on the handler goroutine, which gives the
// frame's buffer back once the handler returned. false: the connection
// must close.
func (c *conn) handle(hdr *kproto.RequestHeader, body []byte, size int, more, handedOff bool) bool {
	start := time.Now()
	c.beginQuota(size + 4)
	resp, err := c.dispatch(hdr, body)
	if handedOff {
		c.pipe.giveBack()
	}
	c.b.metrics.request(hdr.APIKey, time.Since(start))
	if err != nil {
		c.log.Warn("closing connection", "api_key", hdr.APIKey, "api_version", hdr.APIVersion, "err", err)
		return false
	}
	mute := c.endQuota(hdr, resp)
	if resp != nil && !c.send(resp, more) {
		return false
	}
	return c.muteFor(mute) // a client over its quota: its next request waits (quota_conn.go)
}
