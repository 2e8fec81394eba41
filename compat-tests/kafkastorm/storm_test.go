package kafkastorm

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	stormConns      = 16
	maxRequestBytes = 100 << 20 // socket.request.max.bytes default
	partialBody     = 64 << 20  // bytes sent after a large prefix
)

// bigPrefixes are the large size prefixes each storm connection sends, one
// after another: just under, at and over socket.request.max.bytes, and the
// largest positive int32 (2 GiB - 1).
var bigPrefixes = []uint32{maxRequestBytes - 1, maxRequestBytes, maxRequestBytes + 1, 1<<31 - 1}

// stormStats counts what the storm did.
type stormStats struct {
	small, big   atomic.Int64
	bigBytes     atomic.Int64 // bytes of partial bodies the broker accepted
	dialErrors   atomic.Int64
	firstDialErr atomic.Value
}

// runStorm sends smallFrames small malformed frames, shared out among
// stormConns concurrent workers, and each worker sends every one of
// bigPrefixes, spread through its share. Each frame goes on a connection
// of its own, since the broker closes a connection after a malformed frame.
func runStorm(addr string, smallFrames int) *stormStats {
	st := new(stormStats)
	var next atomic.Int64
	every := max(1, smallFrames/stormConns/(len(bigPrefixes)+1))
	var wg sync.WaitGroup
	for w := range stormConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := 0
			for k := 0; k < len(bigPrefixes); {
				n := int(next.Add(1))
				if n <= smallFrames {
					sendSmall(addr, n, st)
					mine++
				}
				if mine >= every*(k+1) || n > smallFrames {
					st.bigBytes.Add(sendBig(addr, bigPrefixes[(w+k)%len(bigPrefixes)], st))
					k++
				}
			}
			for n := int(next.Add(1)); n <= smallFrames; n = int(next.Add(1)) {
				sendSmall(addr, n, st)
			}
		}()
	}
	wg.Wait()
	return st
}

func dial(addr string, st *stormStats) net.Conn {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		st.dialErrors.Add(1)
		st.firstDialErr.CompareAndSwap(nil, err.Error())
		return nil
	}
	return c
}

// sendBig sends a size prefix and up to 64 MiB of a body that never
// completes (for sizes over the limit the broker should close at once),
// keeps the connection open up to 2 s more, then closes it. It returns
// how many body bytes were written.
func sendBig(addr string, size uint32, st *stormStats) int64 {
	c := dial(addr, st)
	if c == nil {
		return 0
	}
	defer c.Close()
	st.big.Add(1)
	c.SetWriteDeadline(time.Now().Add(8 * time.Second)) // the broker may push back
	if _, err := c.Write(binary.BigEndian.AppendUint32(nil, size)); err != nil {
		return 0
	}
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i*7 + int(size))
	}
	var sent int64
	for sent < partialBody {
		n, err := c.Write(chunk)
		sent += int64(n)
		if err != nil {
			break
		}
	}
	// Linger: a body that never completes, on a connection still open.
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	io.Copy(io.Discard, c)
	return sent
}

// sendSmall sends one small malformed frame of kind n%len(smallFrames).
func sendSmall(addr string, n int, st *stormStats) {
	c := dial(addr, st)
	if c == nil {
		return
	}
	defer c.Close()
	st.small.Add(1)
	f := smallFrame(n)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(f); err != nil {
		return
	}
	// Wait (briefly) for the broker's answer or close, so the frames
	// really reach it rather than piling up in the kernel.
	var b [512]byte
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	for {
		if _, err := c.Read(b[:]); err != nil {
			return
		}
	}
}

// smallFrame is the n-th small malformed frame.
func smallFrame(n int) []byte {
	be := binary.BigEndian
	switch n % 8 {
	case 0: // shorter than a request header
		return []byte{0, 0, 0, 3, 1, 2, 3}
	case 1: // unknown API key
		return []byte{0, 0, 0, 10, 0x7f, 0x00, 0, 0, 0, 0, 1, 0xff, 0xff, 0}
	case 2: // negative size
		return be.AppendUint32(nil, 0x80000000|uint32(n))
	case 3: // size 0
		return []byte{0, 0, 0, 0}
	case 4: // Produce v9 header, then garbage
		f := be.AppendUint32(nil, 0)
		f = be.AppendUint16(f, 0)
		f = be.AppendUint16(f, 9)
		f = be.AppendUint32(f, uint32(n))
		f = append(f, 0xff, 0xff, 0) // null client id, no tags
		for i := range 2000 {
			f = append(f, byte(i*31+n))
		}
		be.PutUint32(f, uint32(len(f)-4))
		return f
	case 5: // 1 MiB announced, 100 KiB sent
		f := be.AppendUint32(nil, 1<<20)
		return append(f, make([]byte, 100<<10)...)
	case 6: // just over the limit, nothing after
		return be.AppendUint32(nil, maxRequestBytes+1)
	default: // random-looking bytes
		f := make([]byte, 64)
		for i := range f {
			f[i] = byte(i*97 + n*13)
		}
		return f
	}
}

// smallFrameCount is ZKAFKA_STORM_FRAMES or 10000.
func smallFrameCount(t *testing.T) int {
	if s := os.Getenv("ZKAFKA_STORM_FRAMES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			t.Fatalf("ZKAFKA_STORM_FRAMES=%q", s)
		}
		return n
	}
	return 10000
}
