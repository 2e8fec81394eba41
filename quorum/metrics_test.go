package quorum

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/zkafka/zkafka/internal/obshttp"
)

// startObservedServer starts a standalone server with the Prometheus
// endpoint and the AdminServer on free ports of 127.0.0.1.
func startObservedServer(t *testing.T, edit ...func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig(t.TempDir())
	cfg.TickTime = 100 * time.Millisecond
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 0, 0
	cfg.Metrics = MetricsConfig{Enabled: true, Host: "127.0.0.1", Port: 0, ExportJvmInfo: true}
	cfg.Admin = AdminConfig{Enabled: true, Address: "127.0.0.1", Port: 0, CommandURL: "/commands", IdleTimeout: time.Second}
	for _, e := range edit {
		e(&cfg)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := StartWithListener(cfg, slog.New(slog.DiscardHandler), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func connectZK(t *testing.T, s *Server) *zk.Conn {
	t.Helper()
	return connectAt(t, s.Addr().String(), nil)
}

// connectAt opens a go-zookeeper session on addr through dial (nil: plain
// TCP) and waits until it has its session.
func connectAt(t *testing.T, addr string, dial zk.Dialer) *zk.Conn {
	t.Helper()
	if dial == nil {
		dial = net.DialTimeout
	}
	c, events, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithDialer(dial), zk.WithLogger(silentZK{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	checkFor(t, "a session", func() bool {
		for {
			select {
			case ev := <-events:
				if ev.State == zk.StateHasSession {
					return true
				}
			default:
				return false
			}
		}
	})
	return c
}

// scrape fetches url's /metrics and parses it with the Prometheus text
// parser.
func scrape(t *testing.T, addr net.Addr) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// apacheMetric is one line of testdata/prometheus_metric_names.txt.
type apacheMetric struct{ name, kind, scope string }

func loadApacheMetricNames(t *testing.T) []apacheMetric {
	t.Helper()
	f, err := os.Open("testdata/prometheus_metric_names.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []apacheMetric
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		out = append(out, apacheMetric{fields[0], fields[1], fields[2]})
	}
	if len(out) < 100 {
		t.Fatalf("testdata lists only %d metrics", len(out))
	}
	return out
}

// TestPrometheusMetricNames: every unlabelled metric Apache ZooKeeper
// 3.8's Prometheus provider serves on a standalone server is there, with
// its type and its summary quantiles, and so are the Go runtime's and the
// process's metrics in place of the JVM's.
func TestPrometheusMetricNames(t *testing.T) {
	s := startObservedServer(t)
	fams := scrape(t, s.MetricsAddr())
	types := map[string]dto.MetricType{
		"counter": dto.MetricType_COUNTER, "gauge": dto.MetricType_GAUGE,
		"summary_basic": dto.MetricType_SUMMARY, "summary_advanced": dto.MetricType_SUMMARY,
	}
	for _, m := range loadApacheMetricNames(t) {
		if m.scope != "server" || strings.HasPrefix(m.kind, "summaryset") {
			continue // a leader's, an ensemble's, or labelled (present once a key has a value)
		}
		f := fams[m.name]
		if f == nil {
			t.Errorf("%s (%s) missing", m.name, m.kind)
			continue
		}
		if f.GetType() != types[m.kind] {
			t.Errorf("%s: type %v, Apache's is %s", m.name, f.GetType(), m.kind)
		}
		if f.GetType() == dto.MetricType_SUMMARY {
			var qs []float64
			for _, q := range f.Metric[0].GetSummary().GetQuantile() {
				qs = append(qs, q.GetQuantile())
			}
			want := basicQuantiles
			if m.kind == "summary_advanced" {
				want = advancedQuantiles
			}
			if !slices.Equal(qs, want) {
				t.Errorf("%s: quantiles %v, want %v", m.name, qs, want)
			}
		}
	}
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_open_fds", "process_resident_memory_bytes"} {
		if fams[name] == nil {
			t.Errorf("%s missing (exportJvmInfo=true)", name)
		}
	}
}

// TestPrometheusNoRuntimeMetrics: exportJvmInfo=false leaves out the Go
// and process collectors.
func TestPrometheusNoRuntimeMetrics(t *testing.T) {
	s := startObservedServer(t, func(c *Config) { c.Metrics.ExportJvmInfo = false })
	fams := scrape(t, s.MetricsAddr())
	for name := range fams {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			t.Errorf("%s served with exportJvmInfo=false", name)
		}
	}
	if fams["znode_count"] == nil {
		t.Error("znode_count missing")
	}
}

func gaugeValue(t *testing.T, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil || len(f.Metric) == 0 {
		t.Fatalf("%s missing", name)
	}
	m := f.Metric[0]
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	t.Fatalf("%s is neither a gauge nor a counter", name)
	return 0
}

// TestPrometheusValues: the values follow the server's state, as a
// client changes it.
func TestPrometheusValues(t *testing.T) {
	s := startObservedServer(t)
	before := scrape(t, s.MetricsAddr())
	c := connectZK(t, s)
	const n = 7
	for i := range n {
		if _, err := c.Create(fmt.Sprintf("/m%d", i), []byte("12345"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Create("/m0/e", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.GetW("/m1"); err != nil {
		t.Fatal(err)
	}
	after := scrape(t, s.MetricsAddr())
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"znode_count", gaugeValue(t, before, "znode_count") + n + 1},
		{"ephemerals_count", 1},
		{"watch_count", 1},
		{"num_alive_connections", 1},
		{"global_sessions", 1},
	} {
		if got := gaugeValue(t, after, tc.name); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
		}
	}
	// The same numbers as mntr (one source).
	vals := s.mntrValues()
	if got, want := gaugeValue(t, after, "approximate_data_size"), vals["approximate_data_size"]; fmt.Sprint(got) != want {
		t.Errorf("approximate_data_size = %v, mntr says %s", got, want)
	}
	upd := after["updatelatency"].Metric[0].GetSummary()
	if upd.GetSampleCount() < n+1 {
		t.Errorf("updatelatency count = %d after %d writes", upd.GetSampleCount(), n+1)
	}
	if after["readlatency"].Metric[0].GetSummary().GetSampleCount() < 1 {
		t.Error("readlatency counts no read")
	}
	checkLatencyPercentiles(t, s, upd, n+1)
	var writes *dto.Metric
	for _, m := range after["write_per_namespace"].GetMetric() {
		if m.Label[0].GetName() == "key" && m.Label[0].GetValue() == "m0" {
			writes = m
		}
	}
	if writes == nil || writes.GetSummary().GetSampleCount() != 2 {
		t.Errorf("write_per_namespace{key=m0} = %v, want 2 writes", writes)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHealthReady: /healthz and /readyz on the metrics port; a standalone
// server is ready once started.
func TestHealthReady(t *testing.T) {
	s := startObservedServer(t)
	base := "http://" + s.MetricsAddr().String()
	if code, body := httpGet(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz: %d %s", code, body)
	}
	if code, body := httpGet(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz: %d %s", code, body)
	}
}

// TestReadyNeedsLeader: an ensemble member that knows no leader is alive
// but not ready, and a server shutting down is not ready.
func TestReadyNeedsLeader(t *testing.T) {
	s := newServer(DefaultConfig(t.TempDir()), slog.New(slog.DiscardHandler), nil)
	s.ens = &ensemble{}
	if err := s.ready(); err != errNoLeader {
		t.Fatalf("a member without a leader: ready() = %v", err)
	}
	s.ens.leader.Store(1)
	if err := s.ready(); err != nil {
		t.Fatalf("with a leader: %v", err)
	}
	s.Shutdown(context.Background())
	if err := s.ready(); err != ErrServerClosed {
		t.Fatalf("shut down: ready() = %v", err)
	}
}

// TestPrometheusEnsembleMetrics: a leader adds Apache's leader gauges and
// every member quorum_size; a follower has no leader gauges.
func TestPrometheusEnsembleMetrics(t *testing.T) {
	e := startInprocEnsemble(t, []bool{false, false, false})
	leader := e.waitLeader(t)
	gather := func(s *Server) map[string]*dto.MetricFamily {
		fams, err := obshttp.NewRegistry(false, zkCollector{s}).Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*dto.MetricFamily{}
		for _, f := range fams {
			out[f.GetName()] = f
		}
		return out
	}
	lf, ff := gather(e.servers[leader]), gather(e.servers[(leader+1)%3])
	for _, m := range loadApacheMetricNames(t) {
		switch m.scope {
		case "leader":
			if lf[m.name] == nil {
				t.Errorf("leader lacks %s", m.name)
			}
			if ff[m.name] != nil && m.name != "synced_observers" {
				t.Errorf("a follower serves the leader's %s", m.name)
			}
		case "ensemble":
			if lf[m.name] == nil || ff[m.name] == nil {
				t.Errorf("%s missing on a member", m.name)
			}
		}
	}
	if v := lf["quorum_size"].Metric[0].GetGauge().GetValue(); v != 3 {
		t.Errorf("quorum_size = %v, want 3", v)
	}
	if lf["learner_handler_qp_size"] == nil {
		t.Error("the leader has no learner_handler_qp_size{key} summaries")
	}
}

// checkLatencyPercentiles: the updatelatency quantiles are ordered and
// bounded by the maximum, and mntr reports the same writes with its own
// percentiles (not zeros).
func checkLatencyPercentiles(t *testing.T, s *Server, upd *dto.Summary, writes uint64) {
	t.Helper()
	var last float64
	for _, q := range upd.GetQuantile() {
		if q.GetValue() < last {
			t.Errorf("updatelatency quantile %v = %v below the previous %v", q.GetQuantile(), q.GetValue(), last)
		}
		last = q.GetValue()
	}
	var out strings.Builder
	s.writeMonitor(&out)
	mntr := map[string]int64{}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				mntr[k] = n
			}
		}
	}
	if got := mntr["zk_cnt_updatelatency"]; got < int64(writes) {
		t.Errorf("mntr zk_cnt_updatelatency = %d after %d writes", got, writes)
	}
	maxMs := mntr["zk_max_updatelatency"]
	if p50, p999 := mntr["zk_p50_updatelatency"], mntr["zk_p999_updatelatency"]; p50 > p999 || p999 > maxMs || float64(p999) < last-1 {
		t.Errorf("mntr p50 %d, p999 %d, max %d, Prometheus p99 %v", p50, p999, maxMs, last)
	}
}
