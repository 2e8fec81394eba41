package broker

import (
	"net"
	"testing"
	"time"

	"github.com/zkafka/zkafka/kproto"
)

// TestMetricsHotPathAllocs: once a topic's and an API's counters are
// resolved, counting a produce, a fetch and a request allocates nothing.
func TestMetricsHotPathAllocs(t *testing.T) {
	m := newBrokerMetrics()
	m.appended("t", 1, 100) // resolves t's children
	if n := testing.AllocsPerRun(1000, func() {
		m.appended("t", 10, 1000)
		m.sent("t", 1000)
		m.request(kproto.KeyProduce, time.Millisecond)
	}); n != 0 {
		t.Fatalf("%v allocations per counted request", n)
	}
}

// TestMetricsPortConfig: zkafka.metrics.port and zkafka.metrics.host.
func TestMetricsPortConfig(t *testing.T) {
	for _, tc := range []struct {
		kv   [2]string
		want MetricsConfig
		bad  bool
	}{
		{kv: [2]string{"zkafka.metrics.port", "9404"}, want: MetricsConfig{Port: 9404, Host: "0.0.0.0"}},
		{kv: [2]string{"zkafka.metrics.port", "0"}, want: MetricsConfig{Port: 0, Host: "0.0.0.0"}},
		{kv: [2]string{"zkafka.metrics.port", "-1"}, want: MetricsConfig{Port: -1, Host: "0.0.0.0"}},
		{kv: [2]string{"zkafka.metrics.host", "127.0.0.1"}, want: MetricsConfig{Port: -1, Host: "127.0.0.1"}},
		{kv: [2]string{"zkafka.metrics.port", "65536"}, bad: true},
		{kv: [2]string{"zkafka.metrics.port", "x"}, bad: true},
		{kv: [2]string{"zkafka.metrics.host", "a b"}, bad: true},
	} {
		m := DefaultMetricsConfig()
		ok, err := m.parseProperty(tc.kv[0], tc.kv[1])
		switch {
		case !ok:
			t.Errorf("%v: not a metrics key", tc.kv)
		case tc.bad != (err != nil):
			t.Errorf("%v: err %v", tc.kv, err)
		case !tc.bad && m != tc.want:
			t.Errorf("%v: %+v, want %+v", tc.kv, m, tc.want)
		}
	}
	if DefaultConfig("").Metrics.Enabled() {
		t.Error("the default config opens a metrics port")
	}
}

// TestBrokerReady: /readyz's answer follows registration, the listeners
// and shutdown.
func TestBrokerReady(t *testing.T) {
	b := &Broker{registered: make(chan struct{}), done: make(chan struct{})}
	b.mu.listeners = map[net.Listener]struct{}{}
	if err := b.ready(); err != errNotRegistered {
		t.Fatalf("before registration: %v", err)
	}
	close(b.registered)
	if err := b.ready(); err != errNotServing {
		t.Fatalf("registered, no listener: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	b.mu.listeners[l] = struct{}{}
	if err := b.ready(); err != nil {
		t.Fatalf("registered and serving: %v", err)
	}
	close(b.done)
	if err := b.ready(); err != ErrServerClosed {
		t.Fatalf("shutting down: %v", err)
	}
}
