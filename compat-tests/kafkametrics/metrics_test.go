package kafkametrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

func TestMain(m *testing.M) { kafkaenv.Main(m) }

func startBroker(t *testing.T) *kafkaenv.Env {
	t.Helper()
	return kafkaenv.Start(t, kafkaenv.Configure(func(c *broker.Config) {
		c.Metrics = broker.MetricsConfig{Host: "127.0.0.1", Port: 0}
	}))
}

func metricsURL(e *kafkaenv.Env, path string) string {
	return "http://" + e.Broker().MetricsAddr().String() + path
}

func scrape(t *testing.T, e *kafkaenv.Env) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(metricsURL(e, "/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// value is the value of name's series whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func ctxT(t *testing.T) context.Context { return kafkaenv.Context(t, 30*time.Second) }

// TestBrokerMetrics: after franz-go produces N records to a topic of
// two partitions and a group consumes and commits them, the counters
// and gauges say so.
func TestBrokerMetrics(t *testing.T) {
	e := startBroker(t)
	ctx := ctxT(t)
	const topic, n = "metered", 20
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Addr), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	var valueBytes int
	for i := range n {
		v := []byte(fmt.Sprintf("value-%02d", i))
		valueBytes += len(v)
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(e.Addr), kgo.ConsumeTopics(topic), kgo.ConsumerGroup("g1"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	got := 0
	for got < n/2 {
		fs := consumer.PollRecords(ctx, n/2-got)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}

	fams := scrape(t, e)
	byTopic := map[string]string{"topic": topic}
	if v, _ := value(fams, "kafka_server_brokertopicmetrics_messagesin_total", byTopic); v != n {
		t.Errorf("messagesin_total = %v, want %d", v, n)
	}
	if v, _ := value(fams, "kafka_server_brokertopicmetrics_bytesin_total", byTopic); v < float64(valueBytes) {
		t.Errorf("bytesin_total = %v, less than the %d value bytes", v, valueBytes)
	}
	if v, _ := value(fams, "kafka_server_brokertopicmetrics_bytesout_total", byTopic); v <= 0 {
		t.Errorf("bytesout_total = %v after a consumer fetched", v)
	}
	if v, _ := value(fams, "kafka_network_requestmetrics_requests_total", map[string]string{"request": "Produce"}); v < n {
		t.Errorf("requests_total{Produce} = %v, want >= %d", v, n)
	}
	if v, _ := value(fams, "kafka_network_requestmetrics_totaltimems", map[string]string{"request": "Produce"}); v < n {
		t.Errorf("totaltimems{Produce} count = %v, want >= %d", v, n)
	}
	if fams["kafka_network_requestmetrics_totaltimems"].GetType() != dto.MetricType_HISTOGRAM {
		t.Error("totaltimems is not a histogram")
	}
	ends := map[int]float64{}
	for p := range 2 {
		labels := map[string]string{"topic": topic, "partition": fmt.Sprint(p)}
		v, ok := value(fams, "kafka_log_log_logendoffset", labels)
		if !ok || v != n/2 {
			t.Errorf("logendoffset %v = %v, want %d (round robin)", labels, v, n/2)
		}
		ends[p] = v
		if size, _ := value(fams, "kafka_log_log_size", labels); size <= 0 {
			t.Errorf("log size %v = %v", labels, size)
		}
	}
	var committed float64
	for p := range 2 {
		labels := map[string]string{"consumergroup": "g1", "topic": topic, "partition": fmt.Sprint(p)}
		c, ok := value(fams, "kafka_consumergroup_current_offset", labels)
		if !ok {
			continue // nothing committed on p
		}
		committed += c
		if l, _ := value(fams, "kafka_consumergroup_lag", labels); l != ends[p]-c {
			t.Errorf("lag %v = %v, want %v", labels, l, ends[p]-c)
		}
	}
	if committed != n/2 {
		t.Errorf("group g1 committed %v records, want %d", committed, n/2)
	}
	for name, want := range map[string]float64{
		"kafka_controller_kafkacontroller_activecontrollercount":  1,
		"kafka_controller_kafkacontroller_offlinepartitionscount": 0,
		"kafka_server_replicamanager_underreplicatedpartitions":   0,
	} {
		if v, ok := value(fams, name, nil); !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
	for _, name := range []string{"go_goroutines", "process_open_fds"} {
		if fams[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestBrokerHealthReady: a serving broker registered in ZooKeeper is
// live and ready.
func TestBrokerHealthReady(t *testing.T) {
	e := startBroker(t)
	if code, body := get(t, metricsURL(e, "/healthz")); code != 200 {
		t.Errorf("/healthz: %d %s", code, body)
	}
	// Registration in /brokers/ids follows the first accept.
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := get(t, metricsURL(e, "/readyz"))
		if code == 200 {
			break
		}
		if code != 503 || time.Now().After(deadline) {
			t.Fatalf("/readyz: %d %s", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
