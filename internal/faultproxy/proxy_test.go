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
	// The reset may come before connect returns (a dial error) or after.
	if c, err := net.DialTimeout("tcp", p.Addr(), 5*time.Second); err == nil {
		t.Cleanup(func() { c.Close() })
		if !closedSoon(c) {
			t.Fatal("new connection not reset while refused")
		}
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

// fetchFrame is a Fetch request of version v from replica id (-1: a
// consumer), framed.
func fetchFrame(v int16, replica int32, clientID string) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(v)
	if v >= 15 {
		req.ReplicaState.ID = replica
	} else {
		req.ReplicaID = replica
	}
	t := kmsg.NewFetchRequestTopic()
	t.Topic = "t"
	t.Partitions = append(t.Partitions, kmsg.NewFetchRequestTopicPartition())
	req.Topics = append(req.Topics, t)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)).AppendRequest(nil, req, 9)
}

func TestParseRequest(t *testing.T) {
	id := "broker-1-fetcher-0"
	for _, tc := range []struct {
		name    string
		frame   []byte
		id      string
		replica int32
	}{
		{"metadata with a client id", kafkaFrame(&id), id, -1},
		{"null client id", kafkaFrame(nil), "", -1},
		{"fetch v11 from replica 3", fetchFrame(11, 3, "f"), "f", 3},
		{"fetch v12 (flexible) from replica 2", fetchFrame(12, 2, "f"), "f", 2},
		{"fetch v15 ReplicaState from replica 1", fetchFrame(15, 1, "f"), "f", 1},
		{"fetch from a consumer", fetchFrame(13, -1, "c"), "c", -1},
		{"truncated fetch", fetchFrame(12, 2, "f")[:30], "f", -1},
		{"short frame", []byte{0, 0, 0, 3, 1, 2, 3}, "", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseRequest(tc.frame)
			if got.clientID != tc.id || got.replica != tc.replica {
				t.Fatalf("got %+v, want client id %q replica %d", got, tc.id, tc.replica)
			}
		})
	}
}

func TestReadFrame(t *testing.T) {
	f := fetchFrame(12, 2, "f")
	got, err := readFrame(bytes.NewReader(append(append([]byte(nil), f...), f...)))
	if err != nil || !bytes.Equal(got, f) {
		t.Fatalf("readFrame: %v, %d bytes, want %d", err, len(got), len(f))
	}
	if _, err := readFrame(bytes.NewReader(binary.BigEndian.AppendUint32(nil, maxFrame+1))); err == nil {
		t.Fatal("a frame over maxFrame was read")
	}
	if _, err := readFrame(bytes.NewReader(f[:len(f)-1])); err == nil {
		t.Fatal("a truncated frame was read")
	}
}

// TestCutReplica: connections are known as replica 3's from their first
// Fetch with replica id 3, whatever their client id; a cut stops those and
// leaves replica 2's and the requests before the first Fetch alone.
func TestCutReplica(t *testing.T) {
	p := newProxy(t, true)
	const cid = "zkafka-replica-fetcher" // the same client id for every follower
	id := cid
	r3, r2 := dial(t, p), dial(t, p)
	for _, c := range []net.Conn{r3, r2} {
		if err := roundTrip(c, kafkaFrame(&id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := roundTrip(r3, fetchFrame(12, 3, cid)); err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(r2, fetchFrame(15, 2, cid)); err != nil {
		t.Fatal(err)
	}
	if p.SeenReplica(3) != 1 || p.SeenReplica(2) != 1 {
		t.Fatalf("SeenReplica 3: %d, 2: %d; want 1 each", p.SeenReplica(3), p.SeenReplica(2))
	}
	p.CutReplica(3, Refuse)
	if !closedSoon(r3) {
		t.Fatal("replica 3's connection not reset")
	}
	if err := roundTrip(r2, fetchFrame(15, 2, cid)); err != nil {
		t.Fatalf("replica 2 cut by a rule for replica 3: %v", err)
	}
	again := dial(t, p)
	if err := roundTrip(again, kafkaFrame(&id)); err != nil {
		t.Fatalf("a new connection's first request (not a Fetch) was cut: %v", err)
	}
	again.Write(fetchFrame(12, 3, cid))
	if !closedSoon(again) {
		t.Fatal("a new connection of replica 3 passed its Fetch")
	}
	p.CutReplica(3, Blackhole)
	held := dial(t, p)
	want := fetchFrame(11, 3, cid)
	if _, err := held.Write(want); err != nil {
		t.Fatal(err)
	}
	if !silentFor(held, 300*time.Millisecond) {
		t.Fatal("blackholed replica fetch passed")
	}
	p.Heal()
	held.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(held, got); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("held fetch after Heal: %v", err)
	}
}
