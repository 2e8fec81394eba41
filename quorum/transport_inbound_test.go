package quorum

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// fakePeerNode is the raft node behind a test transport.
type fakePeerNode struct {
	stepped     chan *raftpb.Message
	mu          sync.Mutex
	unreachable []uint64
	snapshots   []bool
	gone        chan peerGoneCall
}

// peerGoneCall is one PeerGone call.
type peerGoneCall struct {
	id        uint64
	connected []uint64
}

func newFakePeerNode() *fakePeerNode {
	return &fakePeerNode{stepped: make(chan *raftpb.Message, 1024), gone: make(chan peerGoneCall, 16)}
}

func (n *fakePeerNode) PeerGone(id uint64, connected []uint64) {
	select {
	case n.gone <- peerGoneCall{id, connected}:
	default:
	}
}

func (n *fakePeerNode) Step(_ context.Context, m *raftpb.Message) error {
	n.stepped <- m
	return nil
}

func (n *fakePeerNode) ReportUnreachable(id uint64) {
	n.mu.Lock()
	n.unreachable = append(n.unreachable, id)
	n.mu.Unlock()
}

func (n *fakePeerNode) ReportSnapshot(_ uint64, delivered bool) {
	n.mu.Lock()
	n.snapshots = append(n.snapshots, delivered)
	n.mu.Unlock()
}

// peerLogSink is a log sink safe for concurrent writers.
type peerLogSink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *peerLogSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *peerLogSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testPeers is a transport of server 1 in an ensemble of servers 1..3
// (whose peers 2 and 3 are never reachable), listening on 127.0.0.1.
type testPeers struct {
	t    *peerTransport
	node *fakePeerNode
	addr string
	logs *peerLogSink
}

func startTestPeers(tb testing.TB, limits peerLimits) *testPeers {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	logs := &peerLogSink{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	addrs := map[uint64]string{1: l.Addr().String(), 2: "127.0.0.1:1", 3: "127.0.0.1:1"}
	tr := newPeerTransport(1, addrs, limits, log)
	node := newFakePeerNode()
	tr.node = node
	tr.start(l)
	tb.Cleanup(tr.close)
	return &testPeers{t: tr, node: node, addr: l.Addr().String(), logs: logs}
}

func peerHello(id uint64) []byte {
	b := append([]byte(peerMagic), peerVersion)
	return binary.BigEndian.AppendUint64(b, id)
}

func (p *testPeers) dial(tb testing.TB, first []byte) net.Conn {
	tb.Helper()
	nc, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { nc.Close() })
	if len(first) > 0 {
		if _, err := nc.Write(first); err != nil {
			tb.Fatal(err)
		}
	}
	return nc
}

// closedByServer waits (bounded) until the server closes nc.
func closedByServer(tb testing.TB, nc net.Conn, within time.Duration) {
	tb.Helper()
	nc.SetReadDeadline(time.Now().Add(within))
	_, err := io.Copy(io.Discard, nc)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		tb.Fatalf("the server did not close the connection within %v", within)
	}
}

// stillOpen checks that the server has not closed nc (a read times out).
func stillOpen(tb testing.TB, nc net.Conn) {
	tb.Helper()
	nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var one [1]byte
	_, err := nc.Read(one[:])
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		tb.Fatalf("the server closed the connection (read: %v)", err)
	}
}

func raftFrame(tb testing.TB, m *raftpb.Message) []byte {
	tb.Helper()
	return appendPeerFrame(nil, peerItem{msg: m})
}

func heartbeat(from uint64) *raftpb.Message {
	typ := raftpb.MsgHeartbeat
	to := uint64(1)
	return &raftpb.Message{Type: &typ, From: &from, To: &to}
}

func (p *testPeers) waitStepped(tb testing.TB, from uint64) {
	tb.Helper()
	select {
	case m := <-p.node.stepped:
		if m.GetFrom() != from {
			tb.Fatalf("stepped a message from %d, want %d", m.GetFrom(), from)
		}
	case <-time.After(10 * time.Second):
		tb.Fatal("no raft message delivered")
	}
}

// The length prefix of a frame from a known peer no longer decides what
// the server allocates: a prefix just under 1 GiB, followed by a few bytes,
// costs about what arrived, and a prefix past the snapshot limit closes
// the connection at once.
func TestPeerHugeLengthPrefixAllocatesWhatArrived(t *testing.T) {
	p := startTestPeers(t, newPeerLimits(0xfffff, 0))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var conns []net.Conn
	for range 4 {
		frame := binary.BigEndian.AppendUint32(peerHello(2), 1<<30-1)
		// kind 1, then a raft message opening with type = MsgSnap
		frame = append(frame, frameRaft, 0x08, byte(raftpb.MsgSnap))
		frame = append(frame, make([]byte, 64<<10)...)
		conns = append(conns, p.dial(t, frame))
	}
	time.Sleep(200 * time.Millisecond) // let the readers take what was sent
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Fatalf("4 frames claiming 1 GiB with 64 KiB sent allocated %d MiB", grew>>20)
	}
	for _, nc := range conns {
		nc.Close()
	}

	over := binary.BigEndian.AppendUint32(peerHello(2), 0xffffffff)
	nc := p.dial(t, append(over, frameRaft, 0x08, byte(raftpb.MsgSnap)))
	closedByServer(t, nc, 10*time.Second)

	// A frame that is not a MsgSnap may not be longer than a raft message.
	big := binary.BigEndian.AppendUint32(peerHello(2), uint32(p.t.limits.frame+1))
	nc = p.dial(t, append(big, frameRaft, 0x08, byte(raftpb.MsgApp)))
	closedByServer(t, nc, 10*time.Second)

	// The peer port still takes a real peer.
	nc = p.dial(t, append(peerHello(3), raftFrame(t, heartbeat(3))...))
	p.waitStepped(t, 3)
	stillOpen(t, nc)
}

// A hello naming a server id outside server.N (or the server's own id) is
// refused, and logged once: a storm of them does not flood the log.
func TestPeerUnknownIDRefused(t *testing.T) {
	p := startTestPeers(t, newPeerLimits(0xfffff, 0))
	for _, id := range []uint64{9, 1, 0, 1 << 40, 7} {
		nc := p.dial(t, append(peerHello(id), raftFrame(t, heartbeat(id))...))
		closedByServer(t, nc, 10*time.Second)
	}
	select {
	case m := <-p.node.stepped:
		t.Fatalf("a message from an unknown id was delivered: %v", m)
	default:
	}
	if n := strings.Count(p.logs.String(), "not a peer in server.N"); n != 1 {
		t.Fatalf("%d log lines about unknown ids, want 1:\n%s", n, p.logs.String())
	}
	nc := p.dial(t, append(peerHello(2), raftFrame(t, heartbeat(2))...))
	p.waitStepped(t, 2)
	stillOpen(t, nc)
}

// Garbage instead of a hello is refused; silent connections are closed
// after the hello deadline, and a crowd of them does not keep a real peer
// out.
func TestPeerGarbageAndSilentConnections(t *testing.T) {
	p := startTestPeers(t, newPeerLimits(0xfffff, 0))
	nc := p.dial(t, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	closedByServer(t, nc, 10*time.Second)
	nc = p.dial(t, append([]byte(peerMagic), 99, 0, 0, 0, 0, 0, 0, 0, 2)) // unknown version
	closedByServer(t, nc, 10*time.Second)

	var silent []net.Conn
	for range 3 * maxPendingPeers {
		silent = append(silent, p.dial(t, nil))
	}
	real := p.dial(t, append(peerHello(2), raftFrame(t, heartbeat(2))...))
	p.waitStepped(t, 2)
	stillOpen(t, real)
	// The oldest silent ones were closed to make room; the last ones go at
	// the hello deadline.
	closedByServer(t, silent[0], 10*time.Second)
	closedByServer(t, silent[len(silent)-1], peerHelloTimeout+10*time.Second)
	peerWaitFor(t, func() bool {
		p.t.mu.Lock()
		defer p.t.mu.Unlock()
		return len(p.t.mu.pending) == 0
	})
}

// A peer has at most maxConnsPerPeer connections: a new one closes an
// older one that never delivered anything, and keeps the one that did.
func TestPeerConnectionsPerIDBounded(t *testing.T) {
	p := startTestPeers(t, newPeerLimits(0xfffff, 0))
	working := p.dial(t, append(peerHello(2), raftFrame(t, heartbeat(2))...))
	p.waitStepped(t, 2)
	idle := p.dial(t, peerHello(2))
	peerWaitFor(t, func() bool {
		p.t.mu.Lock()
		defer p.t.mu.Unlock()
		return len(p.t.mu.byPeer[2]) == 2
	})
	newest := p.dial(t, peerHello(2))
	closedByServer(t, idle, 10*time.Second)
	stillOpen(t, working)
	stillOpen(t, newest)
	if _, err := newest.Write(raftFrame(t, heartbeat(2))); err != nil {
		t.Fatal(err)
	}
	p.waitStepped(t, 2)
}

// Session activity for more sessions than one frame holds is split into
// frames within the limit, and all of it arrives.
func TestPeerTouchesSplitIntoFrames(t *testing.T) {
	limits := newPeerLimits(4096, 0)
	ts := make([]sessionTouch, 3*limits.maxTouches()+5)
	for i := range ts {
		ts[i] = sessionTouch{id: int64(i + 1), timeout: time.Duration(i%30+1) * time.Second}
	}
	addrs := map[uint64]string{1: "x", 2: "y"}
	tr := newPeerTransport(1, addrs, limits, slog.New(slog.DiscardHandler))
	if !tr.sendTouches(2, ts) {
		t.Fatal("touches dropped")
	}
	var got []sessionTouch
	q := tr.set.Load().senders[2].queue
	for len(q) > 0 {
		it := <-q
		frame := appendPeerFrame(nil, it)
		if err := limits.checkOutgoing(frame, it); err != nil {
			t.Fatalf("a frame of %d touches: %v", len(it.touches), err)
		}
		r := &peerFrameReader{br: peerBufReader(frame), limits: limits}
		kind, body, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		dec, err := decodePeerFrame(kind, body, limits)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, dec.touches...)
	}
	if len(got) != len(ts) {
		t.Fatalf("%d touches arrived, want %d", len(got), len(ts))
	}
	for i := range ts {
		if got[i] != ts[i] {
			t.Fatalf("touch %d = %+v, want %+v", i, got[i], ts[i])
		}
	}
}

// A snapshot over the limit is not sent: raft hears it failed, and the
// sender goes on with the next message.
func TestPeerSnapshotOverLimitNotSent(t *testing.T) {
	limits := newPeerLimits(4096, minPeerMaxSnapshot)
	typ := raftpb.MsgSnap
	from, to := uint64(1), uint64(2)
	snap := &raftpb.Message{Type: &typ, From: &from, To: &to,
		Snapshot: &raftpb.Snapshot{Data: make([]byte, limits.snapshot+1)}}
	if err := limits.checkOutgoing(appendPeerFrame(nil, peerItem{msg: snap}), peerItem{msg: snap}); !errors.Is(err, errPeerSnapshotSize) {
		t.Fatalf("checkOutgoing(snapshot over the limit) = %v", err)
	}
	snap.Snapshot.Data = make([]byte, limits.snapshot-1024)
	if err := limits.checkOutgoing(appendPeerFrame(nil, peerItem{msg: snap}), peerItem{msg: snap}); err != nil {
		t.Fatalf("checkOutgoing(snapshot within the limit) = %v", err)
	}
	app := heartbeat(1)
	app.Entries = []*raftpb.Entry{{Data: make([]byte, limits.frame)}}
	if err := limits.checkOutgoing(appendPeerFrame(nil, peerItem{msg: app}), peerItem{msg: app}); !errors.Is(err, errPeerFrameLarge) {
		t.Fatalf("checkOutgoing(message over the frame limit) = %v", err)
	}
}

// A proposal no peer would take fails at once instead of wedging the
// replication of everything after it.
func TestProposalOverEntryLimitFails(t *testing.T) {
	limits := newPeerLimits(4096, 0)
	r := &raftReplicator{maxEntry: limits.entry}
	res := <-r.ProposeAsync(make([]byte, limits.entry+1))
	if !errors.Is(res.err, errTxnTooLarge) {
		t.Fatalf("proposal over the limit: err = %v", res.err)
	}
}

func TestParsePeerMaxSnapshot(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"1048576", 1 << 20, true},
		{"134217728", 1 << 27, true},
		{"4294967295", 1<<32 - 1, true},
		{"4294967296", 0, false},
		{"1000", 0, false},
		{"-1", 0, false},
		{"lots", 0, false},
	} {
		cfg, err := ParseConfig(strings.NewReader("dataDir=/tmp/x\n"+PeerMaxSnapshotKey+"="+tc.in+"\n"), nil)
		if (err == nil) != tc.ok || (tc.ok && cfg.PeerMaxSnapshot != tc.want) {
			t.Errorf("%s=%s: %d, %v", PeerMaxSnapshotKey, tc.in, cfg.PeerMaxSnapshot, err)
		}
		if tc.ok {
			// A snapshot bound is never below the bound of any frame.
			if l := newPeerLimits(cfg.JuteMaxBuffer, cfg.PeerMaxSnapshot); l.snapshot != max(tc.want, l.frame) {
				t.Errorf("limits from zoo.cfg: %+v", l)
			}
		}
	}
}

func peerWaitFor(tb testing.TB, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatal("condition not met within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Two transports on loopback: server 1 sends server 2 a MsgSnap larger
// than any other frame may be; it arrives whole and raft hears it was
// delivered. One over zkafka.peer.maxSnapshotBytes is not sent (raft hears
// it failed) and the connection goes on with the next message.
func TestPeerSnapshotLargerThanAFrame(t *testing.T) {
	limits := newPeerLimits(4096, 4<<20)
	l1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[uint64]string{1: l1.Addr().String(), 2: l2.Addr().String()}
	log := slog.New(slog.DiscardHandler)
	t1, t2 := newPeerTransport(1, addrs, limits, log), newPeerTransport(2, addrs, limits, log)
	n1, n2 := newFakePeerNode(), newFakePeerNode()
	t1.node, t2.node = n1, n2
	t1.start(l1)
	t2.start(l2)
	t.Cleanup(t1.close)
	t.Cleanup(t2.close)

	typ := raftpb.MsgSnap
	from, to := uint64(1), uint64(2)
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	snap := &raftpb.Message{Type: &typ, From: &from, To: &to, Snapshot: &raftpb.Snapshot{Data: data}}
	if len(appendPeerFrame(nil, peerItem{msg: snap})) <= limits.frame {
		t.Fatal("the test snapshot fits in an ordinary frame")
	}
	tooBig := &raftpb.Message{Type: &typ, From: &from, To: &to, Snapshot: &raftpb.Snapshot{Data: make([]byte, 5<<20)}}
	hb := heartbeat(1)
	hb.To = &to
	// Resend until the sender is connected (a message queued before that is dropped).
	peerWaitFor(t, func() bool {
		t1.Send([]*raftpb.Message{snap})
		select {
		case m := <-n2.stepped:
			if !bytes.Equal(m.GetSnapshot().GetData(), data) {
				t.Fatalf("snapshot arrived with %d bytes, want %d", len(m.GetSnapshot().GetData()), len(data))
			}
			return true
		case <-time.After(200 * time.Millisecond):
			return false
		}
	})
	peerWaitFor(t, func() bool {
		n1.mu.Lock()
		defer n1.mu.Unlock()
		return len(n1.snapshots) > 0 && n1.snapshots[len(n1.snapshots)-1]
	})
	t1.Send([]*raftpb.Message{tooBig, hb})
	select {
	case m := <-n2.stepped:
		if m.GetType() != raftpb.MsgHeartbeat {
			t.Fatalf("got a %s after the oversized snapshot, want the heartbeat", m.GetType())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the heartbeat after the oversized snapshot did not arrive")
	}
	n1.mu.Lock()
	last := n1.snapshots[len(n1.snapshots)-1]
	n1.mu.Unlock()
	if last {
		t.Fatal("the oversized snapshot was reported delivered")
	}
}

// recordedWarns collects the messages a refusalLog writes.
type recordedWarns struct{ msgs []string }

func (r *recordedWarns) Warn(msg string, args ...any) { r.msgs = append(r.msgs, msg) }

// The first refusal of each reason is logged in full; later ones are only
// counted, and their number is logged once a refusalReport has passed.
func TestRefusalLogOncePerReasonThenCounts(t *testing.T) {
	var out recordedWarns
	clock := time.Unix(1000, 0)
	r := &refusalLog{log: &out, now: func() time.Time { return clock }}
	r.note("unknown id")
	r.note("bad hello")
	for range 500 {
		r.note("unknown id")
		r.note("bad hello")
	}
	if len(out.msgs) != 2 {
		t.Fatalf("after 1002 refusals of 2 reasons: %d log lines %q, want 2", len(out.msgs), out.msgs)
	}
	clock = clock.Add(refusalReport)
	r.note("unknown id")
	if len(out.msgs) != 3 || !strings.Contains(out.msgs[2], "refusals since the last report") {
		t.Fatalf("no summary after %v: %q", refusalReport, out.msgs)
	}
	r.note("unknown id")
	if len(out.msgs) != 3 {
		t.Fatalf("a second summary at once: %q", out.msgs)
	}
}
