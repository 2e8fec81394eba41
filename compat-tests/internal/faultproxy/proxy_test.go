package faultproxy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// echoServer accepts connections on 127.0.0.1 and echoes what they send.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func newProxy(t *testing.T, kafka bool) *Proxy {
	t.Helper()
	p, err := start(echoServer(t), kafka)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dial(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes msg and reads it back within 5 s.
func roundTrip(c net.Conn, msg []byte) error {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write(msg); err != nil {
		return err
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if !bytes.Equal(got, msg) {
		return errors.New("echo differs")
	}
	return nil
}

// silentFor reports whether nothing arrives on c for d (a lower bound: a
// proxy that passes data fails it at once).
func silentFor(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	defer c.SetReadDeadline(time.Time{})
	var b [1]byte
	_, err := c.Read(b[:])
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// closedSoon reports whether c is reset or closed within 5 s.
func closedSoon(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	_, err := io.Copy(io.Discard, c)
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

func TestForwards(t *testing.T) {
	p := newProxy(t, false)
	c := dial(t, p)
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: several chunks
	if err := roundTrip(c, big); err != nil {
		t.Fatal(err)
	}
	if p.Open() != 1 {
		t.Fatalf("open connections %d, want 1", p.Open())
	}
}

// TestRefuse: open connections are reset and new ones are reset at once;
// Heal lets new connections through.
func TestRefuse(t *testing.T) {
	p := newProxy(t, false)
	c := dial(t, p)
	if err := roundTrip(c, []byte("before")); err != nil {
		t.Fatal(err)
	}
	p.Cut(Refuse)
	if !closedSoon(c) {
		t.Fatal("open connection not reset by Cut(Refuse)")
	}
	if !closedSoon(dial(t, p)) {
		t.Fatal("new connection not reset while refused")
	}
	p.Heal()
	if err := roundTrip(dial(t, p), []byte("after")); err != nil {
		t.Fatalf("after Heal: %v", err)
	}
}

// TestBlackhole: nothing passes while cut, the connection stays open, and
// what was sent during the cut arrives after Heal.
func TestBlackhole(t *testing.T) {
	p := newProxy(t, false)
	c := dial(t, p)
	if err := roundTrip(c, []byte("before")); err != nil {
		t.Fatal(err)
	}
	p.Cut(Blackhole)
	if _, err := c.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	if !silentFor(c, 300*time.Millisecond) {
		t.Fatal("data passed a blackhole")
	}
	fresh := dial(t, p)
	fresh.Write([]byte("x"))
	if !silentFor(fresh, 300*time.Millisecond) {
		t.Fatal("a new connection passed a blackhole")
	}
	p.Heal()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "held" {
		t.Fatalf("after Heal read %q, %v; want the held bytes", got, err)
	}
	fresh.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(fresh, got[:1]); err != nil || got[0] != 'x' {
		t.Fatalf("held new connection after Heal read %q, %v", got[:1], err)
	}
}

func TestDelay(t *testing.T) {
	p := newProxy(t, false)
	c := dial(t, p)
	p.SetDelay(150 * time.Millisecond)
	start := time.Now()
	if err := roundTrip(c, []byte("slow")); err != nil {
		t.Fatal(err)
	}
	// Both directions are delayed: at least 2 × 150 ms.
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("round trip %v with a 150 ms delay each way", d)
	}
	p.SetDelay(0)
	if err := roundTrip(c, []byte("fast")); err != nil {
		t.Fatal(err)
	}
}

// kafkaFrame is a Metadata request with client id id (nil: null), framed.
func kafkaFrame(id *string) []byte {
	f := kmsg.RequestFormatter{}
	if id != nil {
		f = *kmsg.NewRequestFormatter(kmsg.FormatterClientID(*id))
	}
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(9) // a flexible version: request header v2
	return f.AppendRequest(nil, req, 7)
}

// TestCutClients: a rule by client id prefix cuts the replica fetcher's
// connections of one broker and leaves a producer's and another broker's
// alone; Seen counts them.
func TestCutClients(t *testing.T) {
	p := newProxy(t, true)
	ids := []string{"broker-3-fetcher-0", "broker-3-fetcher-1", "broker-2-fetcher-0", "producer-1"}
	conns := map[string]net.Conn{}
	for _, id := range ids {
		c := dial(t, p)
		if err := roundTrip(c, kafkaFrame(&id)); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		conns[id] = c
	}
	if n := p.Seen("broker-3-fetcher"); n != 2 {
		t.Fatalf("Seen(broker-3-fetcher) = %d, want 2 (ids %v)", n, p.ClientIDs())
	}
	p.CutClients("broker-3-fetcher", Refuse)
	for _, id := range ids[:2] {
		if !closedSoon(conns[id]) {
			t.Fatalf("%s not reset", id)
		}
	}
	for _, id := range ids[2:] {
		if err := roundTrip(conns[id], kafkaFrame(&id)); err != nil {
			t.Fatalf("%s cut by a rule for broker-3-fetcher: %v", id, err)
		}
	}
	again := dial(t, p)
	again.Write(kafkaFrame(&ids[0]))
	if !closedSoon(again) {
		t.Fatal("a new broker-3 fetcher connection passed")
	}
	p.CutClients("broker-3-fetcher", Blackhole) // a milder rule for the same prefix replaces it
	held := dial(t, p)
	if _, err := held.Write(kafkaFrame(&ids[1])); err != nil {
		t.Fatal(err)
	}
	if !silentFor(held, 300*time.Millisecond) {
		t.Fatal("blackholed fetcher connection passed")
	}
	p.CutClients("broker-3-fetcher", Pass)
	want := kafkaFrame(&ids[1])
	held.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(held, got); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("held fetcher frame after the rule was removed: %v", err)
	}
}

func TestReadKafkaHeader(t *testing.T) {
	id := "broker-1-fetcher-0"
	frame := func(size int32, rest ...byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(size)), rest...)
	}
	for _, tc := range []struct {
		name   string
		in     []byte
		id     string
		n      int // header bytes returned
		failed bool
	}{
		{"client id", kafkaFrame(&id), id, 14 + len(id), false},
		{"null client id", kafkaFrame(nil), "", 14, false},
		{"short frame", frame(3, 1, 2, 3), "", 4, false},
		{"id past frame", frame(10, 0, 3, 0, 9, 0, 0, 0, 1, 0, 5), "", 0, true},
		{"truncated", frame(40, 0, 3), "", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, got, err := readKafkaHeader(bytes.NewReader(tc.in))
			if (err != nil) != tc.failed || got != tc.id || len(head) != tc.n {
				t.Fatalf("got %q, %d bytes, %v; want %q, %d bytes, failed=%v", got, len(head), err, tc.id, tc.n, tc.failed)
			}
			if err == nil && !bytes.Equal(head, tc.in[:len(head)]) {
				t.Fatal("header bytes differ from the input")
			}
		})
	}
}
