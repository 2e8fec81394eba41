package controller

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// fakeBroker answers ApiVersions and the controller's requests on a real
// socket, recording each request's controller epoch (the tests' marker)
// in arrival order. It closes the connection instead of answering the
// first drop requests, and holds every request after hold (never
// answering it) until the test ends.
type fakeBroker struct {
	l    net.Listener
	mu   sync.Mutex
	got  []int32
	drop int
	hold int32 // 0: none
	// inFlight counts requests that arrived and are not yet answered;
	// maxInFlight is its highest value.
	inFlight, maxInFlight int
	done                  chan struct{}
}

func startFakeBroker(t *testing.T) *fakeBroker {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeBroker{l: l, done: make(chan struct{})}
	t.Cleanup(func() { close(f.done); l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

// serve reads the connection's requests as they arrive (so that a
// second request sent before the first is answered counts as in flight)
// and answers them in order, each after 2 ms.
func (f *fakeBroker) serve(c net.Conn) {
	defer c.Close()
	frames := make(chan []byte, 16)
	go func() {
		defer close(frames)
		r := bufio.NewReader(c)
		for {
			frame, err := kproto.ReadFrame(r, nil, 1<<20)
			if err != nil {
				return
			}
			f.mu.Lock()
			f.inFlight++
			f.maxInFlight = max(f.maxInFlight, f.inFlight)
			f.mu.Unlock()
			frames <- frame
		}
	}()
	for frame := range frames {
		resp, corr, ok := f.answer(frame)
		if ok {
			time.Sleep(2 * time.Millisecond)
		}
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
		if !ok {
			return
		}
		if _, err := c.Write(kproto.AppendKmsgResponseFrame(nil, corr, resp)); err != nil {
			return
		}
	}
}

// answer decodes one request and returns its answer (false: close the
// connection unanswered).
func (f *fakeBroker) answer(frame []byte) (kmsg.Response, int32, bool) {
	hdr, body, err := kproto.ParseRequestHeader(frame, nil)
	if err != nil {
		return nil, 0, false
	}
	req, err := kproto.DecodeKmsg(hdr.APIKey, hdr.APIVersion, body)
	if err != nil {
		return nil, 0, false
	}
	switch req := req.(type) {
	case *kmsg.ApiVersionsRequest:
		av := req.ResponseKind().(*kmsg.ApiVersionsResponse)
		for _, k := range []struct{ key, v int16 }{{4, 7}, {5, 4}, {6, 8}, {18, 3}} {
			av.ApiKeys = append(av.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k.key, MinVersion: 0, MaxVersion: k.v})
		}
		av.SetVersion(min(hdr.APIVersion, 3))
		return av, hdr.CorrelationID, true
	case *kmsg.LeaderAndISRRequest:
		f.mu.Lock()
		f.got = append(f.got, req.ControllerEpoch)
		drop := f.drop > 0
		if drop {
			f.drop--
		}
		hold := f.hold != 0 && req.ControllerEpoch >= f.hold
		f.mu.Unlock()
		if drop {
			return nil, 0, false
		}
		if hold {
			<-f.done
			return nil, 0, false
		}
		resp := req.ResponseKind()
		resp.SetVersion(hdr.APIVersion)
		return resp, hdr.CorrelationID, true
	}
	return nil, 0, false
}

func (f *fakeBroker) received() []int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

func (f *fakeBroker) info(epoch int64) BrokerInfo {
	addr := f.l.Addr().(*net.TCPAddr)
	return BrokerInfo{Epoch: epoch, Endpoints: []Endpoint{{Listener: "INTERNAL", Protocol: "PLAINTEXT", Host: "127.0.0.1", Port: int32(addr.Port)}}}
}

func lair(marker int32) *kmsg.LeaderAndISRRequest {
	r := kmsg.NewPtrLeaderAndISRRequest()
	r.ControllerEpoch = marker
	return r
}

// newTestManager returns a ChannelManager whose goroutines the test
// waits for.
func newTestManager(t *testing.T) (*ChannelManager, *sync.WaitGroup) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	m := &ChannelManager{Listener: "INTERNAL", Done: done, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		RetryBackoff: 10 * time.Millisecond,
		Go: func(name string, fn func()) bool {
			wg.Add(1)
			go func() { defer wg.Done(); fn() }()
			return true
		}}
	t.Cleanup(func() { close(done); wg.Wait() })
	return m, &wg
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

// TestChannelRetriesInOrder: requests queued for a broker reach it in
// order, one at a time; one whose connection broke before its answer is
// sent again on a new connection.
func TestChannelRetriesInOrder(t *testing.T) {
	f := startFakeBroker(t)
	f.drop = 1
	m, _ := newTestManager(t)
	m.SetBrokers(map[int32]BrokerInfo{2: f.info(7)})
	for i := int32(1); i <= 5; i++ {
		m.Enqueue(2, lair(i))
	}
	want := []int32{1, 1, 2, 3, 4, 5}
	waitFor(t, "all five answered", func() bool { return len(f.received()) >= len(want) })
	if got := f.received(); !slices.Equal(got, want) {
		t.Fatalf("received %v, want %v (the first sent twice)", got, want)
	}
	if f.maxInFlight != 1 {
		t.Fatalf("%d requests in flight at once", f.maxInFlight)
	}
}

// TestChannelDroppedWithBroker: when the broker leaves (or registers
// again), its queue goes with what it held: its sender stops, the request
// in flight is abandoned and the queued ones are never sent. A new
// registration gets a new queue.
func TestChannelDroppedWithBroker(t *testing.T) {
	f := startFakeBroker(t)
	f.hold = 1
	m, _ := newTestManager(t)
	m.SetBrokers(map[int32]BrokerInfo{2: f.info(7)})
	m.Enqueue(2, lair(1))
	m.Enqueue(2, lair(2))
	waitFor(t, "the first request arrived", func() bool { return len(f.received()) == 1 })
	m.SetBrokers(map[int32]BrokerInfo{})
	m.Enqueue(2, lair(3)) // no queue: dropped
	m.mu.Lock()
	n := len(m.queues)
	m.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d queues left", n)
	}
	f2 := startFakeBroker(t)
	m.SetBrokers(map[int32]BrokerInfo{2: f2.info(8)})
	m.Enqueue(2, lair(4))
	waitFor(t, "the new registration's request", func() bool { return len(f2.received()) == 1 })
	if got := f.received(); !slices.Equal(got, []int32{1}) {
		t.Fatalf("the old queue sent %v after it was dropped", got)
	}
	if got := f2.received(); !slices.Equal(got, []int32{4}) {
		t.Fatalf("the new queue sent %v, want [4]", got)
	}
}
