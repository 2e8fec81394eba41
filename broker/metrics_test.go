package broker

import (
	"encoding/binary"
	"hash/crc32"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
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

// TestMessagesInSkipsDuplicates: an idempotent producer's retried batch,
// answered with its original offset and not appended again, is not
// counted again in messagesin and bytesin.
func TestMessagesInSkipsDuplicates(t *testing.T) {
	b, part := newTestBroker(t)
	b.metrics = newBrokerMetrics()
	c := allocConn(b)
	batch := testBatch(100)
	binary.BigEndian.PutUint64(batch[43:], 7) // producer id 7, epoch 0, base sequence 0
	binary.BigEndian.PutUint16(batch[51:], 0)
	binary.BigEndian.PutUint32(batch[53:], 0)
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
	body := produceRequestBody(9, batch)
	hdr := kproto.RequestHeader{APIKey: kproto.KeyProduce, APIVersion: 9, CorrelationID: 1}
	for range 2 {
		resp, err := handleProduce(c, &hdr, body)
		if err != nil {
			t.Fatal(err)
		}
		resp.release()
	}
	if next := part.log.NextOffset(); next != 1 {
		t.Fatalf("the retry was appended: log end %d", next)
	}
	if v := testutil.ToFloat64(b.metrics.messagesIn.WithLabelValues("t")); v != 1 {
		t.Errorf("messagesin = %v, want 1", v)
	}
	if v := testutil.ToFloat64(b.metrics.bytesIn.WithLabelValues("t")); v != float64(len(batch)) {
		t.Errorf("bytesin = %v, want %d", v, len(batch))
	}
}
