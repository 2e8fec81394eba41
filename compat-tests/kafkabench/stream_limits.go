package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
)

// loopbackLimit measures one TCP stream from this process to a reader
// process over loopback, writing 1 MiB buffers for d; the best of reps.
func loopbackLimit(dir string, d time.Duration, reps int) (limit, error) {
	return streamLimit(dir, d, reps, streamBuffer(1<<20))
}

// socketFileLimit measures this machine doing what a produce does with
// record bytes and nothing else: a reader process receives one loopback
// TCP stream in chunk reads and writes each chunk to the end of a new
// file (buffered, no fsync), for d; the best of reps, each after settle.
// Its reader's CPU per GB is the floor of the broker's for a produce, the
// receive and the write running side by side as they do in the broker
// (on this kind of virtual machine they cost more together than the write
// and receive limits measured apart).
func socketFileLimit(dir string, chunk int, d time.Duration, reps int) (limit, error) {
	files := filepath.Join(dir, "socketfile")
	if err := os.MkdirAll(files, 0o755); err != nil {
		return limit{}, err
	}
	defer os.RemoveAll(files)
	return streamLimit(dir, d, reps, streamBuffer(chunk), "-tcp-sink-dir", files, "-tcp-sink-chunk", strconv.Itoa(chunk))
}

// streamBuffer is a sender for streamLimit: it writes the same buffer of
// size bytes until the deadline.
func streamBuffer(size int) func(c net.Conn, deadline time.Time) (int64, error) {
	buf := make([]byte, size)
	return func(c net.Conn, deadline time.Time) (int64, error) {
		var n int64
		for time.Now().Before(deadline) {
			m, err := c.Write(buf)
			n += int64(m)
			if err != nil {
				return n, err
			}
		}
		return n, nil
	}
}

// sendfileChunk is what one sendfile call of the sendfile limit sends: a
// raw fetch's response size (32 batches of 256 KiB).
const sendfileChunk = 8 << 20

// sendfileLimit measures this machine's own cost of what a fetch does
// with record bytes: sendfile(2) of a page-cached file (the segment the
// raw fetch reads, so the same pages in the same state) to a reader
// process over loopback, sendfileChunk per call, streaming with no
// request between calls, for d; the best of reps. Against the loopback write limit it differs in two ways the
// broker cannot change: the sender moves pages instead of copying a hot
// buffer, and the reader copies bytes that are not in the CPU's caches
// (the loopback limit's reader copies what the writer has just written).
func sendfileLimit(dir, path string, d time.Duration, reps int) (limit, error) {
	f, err := os.Open(path)
	if err != nil {
		return limit{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return limit{}, err
	}
	return streamLimit(dir, d, reps, func(c net.Conn, deadline time.Time) (int64, error) {
		return sendfileTo(c, f, st.Size(), deadline)
	})
}

// sendfileTo sends the file's bytes from offset 0 until the deadline,
// starting over at its end (the pages stay cached), and returns the bytes
// sent.
func sendfileTo(c net.Conn, f *os.File, size int64, deadline time.Time) (int64, error) {
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		return 0, err
	}
	var off, sent int64
	var serr error
	for time.Now().Before(deadline) {
		if off == size {
			off = 0
		}
		end := min(off+sendfileChunk, size)
		err := rc.Write(func(fd uintptr) bool {
			for off < end {
				n, e := syscall.Sendfile(int(fd), int(f.Fd()), &off, int(end-off))
				sent += int64(max(n, 0))
				switch {
				case e == syscall.EAGAIN:
					return false
				case e == syscall.EINTR:
				case e != nil:
					serr = e
					return true
				case n == 0:
					serr = errors.New("sendfile sent nothing")
					return true
				}
			}
			return true
		})
		if err == nil {
			err = serr
		}
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// streamLimit runs send on a fresh connection to a tcp sink process (with
// sinkArgs) reps times, each for up to d after settle, and returns the best
// rate with the sender's (this process's) and the sink's CPU per GB.
func streamLimit(dir string, d time.Duration, reps int, send func(c net.Conn, deadline time.Time) (int64, error), sinkArgs ...string) (limit, error) {
	port, err := benchkit.FreePort()
	if err != nil {
		return limit{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return limit{}, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	argv := append([]string{self, "-tcp-sink", strconv.Itoa(port)}, sinkArgs...)
	p, err := benchkit.Start("tcp sink", filepath.Join(dir, "sink.log"), dir, argv...)
	if err != nil {
		return limit{}, err
	}
	defer p.Stop(2 * time.Second)
	var best limit
	for range reps {
		settle()
		var c net.Conn
		for i := 0; i < 100; i++ {
			if c, err = net.Dial("tcp", addr); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			return limit{}, err
		}
		r0, _ := benchkit.CPUTime(p.Pid())
		w0 := benchkit.SelfCPU()
		start := time.Now()
		n, err := send(c, start.Add(d))
		el := time.Since(start)
		w1 := benchkit.SelfCPU()
		c.Close()
		if err != nil {
			return limit{}, err
		}
		time.Sleep(50 * time.Millisecond)
		r1, _ := benchkit.CPUTime(p.Pid())
		gb := float64(n) / 1e9
		if rate := float64(n) / el.Seconds(); rate > best.rate {
			best = limit{rate: rate, writeCPU: (w1 - w0).Seconds() / gb, readCPU: (r1 - r0).Seconds() / gb}
		}
	}
	return best, nil
}
