package segment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConcurrentReaders runs readers against an appender that also rolls,
// truncates nothing and enforces retention; every read must return whole,
// valid batches starting at the right offset (run it with -race).
func TestConcurrentReaders(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{SegmentBytes: 4000, IndexIntervalBytes: 300, RetentionBytes: 20000, FlushInterval: time.Millisecond})
	defer l.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for r := range 4 {
		wg.Go(func() {
			var buf []byte
			for i := 0; !stop.Load(); i++ {
				start, next := l.StartOffset(), l.NextOffset()
				if next == start {
					continue
				}
				off := start + int64(i*(r+1))%(next-start)
				var err error
				buf, err = l.ReadBatches(off, 1000, buf[:0])
				if errors.Is(err, ErrOffsetOutOfRange) {
					continue // retention moved the start meanwhile
				}
				if err != nil {
					errc <- err
					return
				}
				es, err := parseBatches(buf)
				if err != nil || len(es) == 0 || es[0].base > off || es[0].base+int64(es[0].count) <= off {
					errc <- fmt.Errorf("read at %d (start %d next %d): %d batches, %v", off, start, next, len(es), err)
					return
				}
				for _, e := range es {
					if !bytes.Equal(e.payload, payloadFor(e.base, len(e.payload))) {
						errc <- errors.New("bad payload")
						return
					}
				}
				if _, err := l.OffsetForTime(int64(i % 500)); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	for i := range 3000 {
		appendEntry(t, l, nil, int32(1+i%3), int64(i%500), 20+i%200)
		if i%100 == 0 {
			if _, err := l.EnforceRetention(); err != nil {
				t.Fatal(err)
			}
		}
		if i%250 == 0 {
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

// TestWriteToSocket sends a range over TCP (sendfile on Linux) and checks
// the bytes that arrive.
func TestWriteToSocket(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{})
	defer l.Close()
	fill(t, l, nil, 200)
	want, err := l.ReadBatches(3, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(c)
		c.Close()
		got <- b
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Read(3, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	n, err := r.WriteTo(c)
	r.Release()
	c.Close()
	if err != nil || n != int64(len(want)) {
		t.Fatalf("WriteTo = %d, %v; want %d bytes", n, err, len(want))
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("received %d bytes, not the range", len(b))
	}
}
