package quorum

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// promGauges are the mntr keys Apache ZooKeeper registers as gauges
// (ZooKeeperServer.registerMetrics, LeaderZooKeeperServer and
// QuorumZooKeeperServer's registerGauge calls); the other numeric mntr
// keys are ServerMetrics counters. Its Prometheus provider serves each
// under the mntr name without the zk_ prefix.
var promGauges = map[string]bool{
	"approximate_data_size": true, "auth_failed_count": true, "avg_latency": true,
	"connection_drop_probability": true, "ephemerals_count": true, "global_sessions": true,
	"last_client_response_size": true, "local_sessions": true, "max_client_response_size": true,
	"max_file_descriptor_count": true, "max_latency": true, "min_client_response_size": true,
	"min_latency": true, "non_mtls_local_conn_count": true, "non_mtls_remote_conn_count": true,
	"num_alive_connections": true, "open_file_descriptor_count": true, "outstanding_requests": true,
	"outstanding_tls_handshake": true, "packets_received": true, "packets_sent": true, "uptime": true,
	"watch_count": true, "znode_count": true,
	// An ensemble member's and a leader's.
	"quorum_size": true, "learners": true, "synced_followers": true, "synced_non_voting_followers": true,
	"synced_observers": true, "pending_syncs": true, "leader_uptime": true, "last_proposal_size": true,
	"max_proposal_size": true, "min_proposal_size": true,
}

// isMntrKey: the keys of mntrKeys.
var isMntrKey = func() map[string]bool {
	m := make(map[string]bool, len(mntrKeys))
	for _, k := range mntrKeys {
		m[k] = true
	}
	return m
}()

// Summary quantiles, as PrometheusSummary builds them: DetailLevel.BASIC
// has the median, ADVANCED the median, p90 and p99.
var (
	basicQuantiles    = []float64{0.5}
	advancedQuantiles = []float64{0.5, 0.9, 0.99}
)

// zkCollector serves the server's mntr numbers as Prometheus metrics: one
// source for both (mntrValues, ensembleMonitorLines, serverStats), read at
// each scrape, so nothing on a request's path changes for metrics.
type zkCollector struct{ s *Server }

// Describe sends nothing: the collector is unchecked, since the metrics an
// ensemble member has change with its role (as ZooKeeper registers and
// unregisters the leader's gauges).
func (zkCollector) Describe(chan<- *prometheus.Desc) {}

// Collect is one scrape.
func (c zkCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	vals := s.mntrValues()
	for _, l := range s.ensembleMonitorLines() {
		vals[strings.TrimPrefix(l[0], "zk_")] = l[1]
	}
	for name, v := range vals {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue // version, server_state, peer_state: text, as ZooKeeper's provider leaves them out
		}
		if !promGauges[name] && !isMntrKey[name] {
			// mntr only: observer_master_id, and the flattened
			// learner_handler summaries (labelled summaries below).
			continue
		}
		ch <- constMetric(name, f)
	}
	for _, name := range mntrKeys {
		if _, ok := vals[name]; !ok && name != "version" && name != "server_state" {
			ch <- constMetric(name, 0)
		}
	}
	for _, name := range mntrSummaries {
		ch <- constSummary(name, summary{}, nil, basicQuantiles, nil)
	}
	measured := s.stats.measuredLatencies()
	for _, name := range mntrPercentileSummaries {
		sum, hist := measured.of(name)
		ch <- constSummary(name, sum, hist, advancedQuantiles, nil)
	}
	s.stats.collectNamespaces(ch)
	if s.ens != nil && s.isLeader() {
		for _, id := range s.followerStatus().learnerIDs {
			key := map[string]string{"key": strconv.FormatUint(id, 10)}
			ch <- constSummary("learner_handler_qp_size", summary{}, nil, basicQuantiles, key)
			ch <- constSummary("learner_handler_qp_time_ms", summary{}, nil, advancedQuantiles, key)
		}
	}
}

// constMetric is a gauge or a counter, as ZooKeeper types the name.
func constMetric(name string, v float64) prometheus.Metric {
	t := prometheus.CounterValue
	if promGauges[name] {
		t = prometheus.GaugeValue
	}
	return prometheus.MustNewConstMetric(prometheus.NewDesc(name, name, nil, nil), t, v)
}

// constSummary renders one of zkafka's AvgMinMaxCounters as a Prometheus
// summary: its quantiles from hist, or, for a summary without one (those
// zkafka does not measure, and the per-namespace ones), the maximum.
func constSummary(name string, s summary, hist *latencyHistogram, quantiles []float64, labels prometheus.Labels) prometheus.Metric {
	q := make(map[float64]float64, len(quantiles))
	for _, p := range quantiles {
		q[p] = float64(s.max)
		if hist != nil {
			q[p] = float64(hist.quantile(p, s.max))
		}
	}
	var keys []string
	var values []string
	for k, v := range labels {
		keys, values = append(keys, k), append(values, v)
	}
	return prometheus.MustNewConstSummary(prometheus.NewDesc(name, name, keys, nil),
		uint64(s.count), float64(s.total), q, values...)
}

// collectNamespaces serves READ_PER_NAMESPACE and WRITE_PER_NAMESPACE as
// the summary sets read_per_namespace{key="ns"} and write_per_namespace.
func (s *serverStats) collectNamespaces(ch chan<- prometheus.Metric) {
	var out []prometheus.Metric
	s.mu.Lock()
	for name, m := range map[string]map[string]*summary{"read_per_namespace": s.mu.reads, "write_per_namespace": s.mu.writes} {
		for ns, sum := range m {
			out = append(out, constSummary(name, *sum, nil, basicQuantiles, prometheus.Labels{"key": ns}))
		}
	}
	s.mu.Unlock()
	for _, m := range out {
		ch <- m // not under s.mu: the registry's reader may be slow
	}
}
