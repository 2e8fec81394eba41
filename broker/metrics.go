package broker

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The broker's Prometheus metrics, named as the usual JMX exporter rules
// for Kafka name the MBeans (prometheus/jmx_exporter's
// example_configs/kafka-2_0_0.yml: kafka.server<type=BrokerTopicMetrics,
// name=MessagesInPerSec, topic=t><>Count becomes
// kafka_server_brokertopicmetrics_messagesin_total{topic="t"}), so that
// dashboards made for Kafka work:
//
//	kafka_server_brokertopicmetrics_{messagesin,bytesin,bytesout}_total{topic}
//	kafka_network_requestmetrics_requests_total{request}
//	kafka_network_requestmetrics_totaltimems{request} (a histogram, ms)
//	kafka_server_replicamanager_{underreplicatedpartitions,partitioncount,leadercount}
//	kafka_controller_kafkacontroller_{activecontrollercount,offlinepartitionscount}
//	kafka_log_log_{size,logendoffset,logstartoffset}{topic,partition}
//	kafka_consumergroup_{current_offset,lag}{consumergroup,topic,partition}
//
// The last family is kafka_exporter's (Kafka's broker has no lag MBean).
//
// Counters on the request path are atomic adds on label children resolved
// once: per API key at start, per topic at its first record (topicMetrics).
// The gauges are read from the broker's state at each scrape
// (metrics_state.go).

// brokerMetrics are the counters the request path updates.
type brokerMetrics struct {
	messagesIn, bytesIn, bytesOut *prometheus.CounterVec
	requests                      *prometheus.CounterVec
	totalTime                     *prometheus.HistogramVec

	// topics holds each topic's resolved counters, by name.
	topics sync.Map // string -> *topicMetrics
	// byKey holds each API key's resolved children; nil for keys
	// zkafka does not serve.
	byKey [maxAPIKey + 1]*apiMetrics
}

// maxAPIKey bounds the API keys with request metrics.
const maxAPIKey = 127

type topicMetrics struct {
	messagesIn, bytesIn, bytesOut prometheus.Counter
}

type apiMetrics struct {
	requests  prometheus.Counter
	totalTime prometheus.Observer
}

// totalTimeBuckets are the request time histogram's bounds, in ms.
var totalTimeBuckets = []float64{0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000}

func newBrokerMetrics() *brokerMetrics {
	topicCounter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kafka_server_brokertopicmetrics_" + name + "_total", Help: help}, []string{"topic"})
	}
	m := &brokerMetrics{
		messagesIn: topicCounter("messagesin", "Records appended, by topic (MessagesInPerSec)."),
		bytesIn:    topicCounter("bytesin", "Record batch bytes appended, by topic (BytesInPerSec)."),
		bytesOut:   topicCounter("bytesout", "Record bytes sent to fetchers, by topic (BytesOutPerSec)."),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kafka_network_requestmetrics_requests_total",
			Help: "Requests handled, by API (RequestsPerSec)."}, []string{"request"}),
		totalTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kafka_network_requestmetrics_totaltimems",
			Help: "Time from a request's arrival to its response, ms (TotalTimeMs), by API.", Buckets: totalTimeBuckets}, []string{"request"}),
	}
	for key := range apis {
		if key >= 0 && int(key) <= maxAPIKey {
			name := requestName(key)
			m.byKey[key] = &apiMetrics{requests: m.requests.WithLabelValues(name), totalTime: m.totalTime.WithLabelValues(name)}
		}
	}
	return m
}

// requestName is Kafka's name of an API in RequestMetrics' request tag
// ("Produce", "FetchConsumer" is Kafka's split of Fetch, not made here).
func requestName(key int16) string {
	if n := kmsg.NameForKey(key); n != "" {
		return n
	}
	return strconv.Itoa(int(key))
}

// collectors are what the registry serves of m.
func (m *brokerMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.messagesIn, m.bytesIn, m.bytesOut, m.requests, m.totalTime}
}

// topic returns topic's counters, resolving them the first time.
func (m *brokerMetrics) topic(name string) *topicMetrics {
	if t, ok := m.topics.Load(name); ok {
		return t.(*topicMetrics)
	}
	t := &topicMetrics{
		messagesIn: m.messagesIn.WithLabelValues(name),
		bytesIn:    m.bytesIn.WithLabelValues(name),
		bytesOut:   m.bytesOut.WithLabelValues(name),
	}
	actual, _ := m.topics.LoadOrStore(name, t)
	return actual.(*topicMetrics)
}

// forgetTopic drops a deleted topic's series.
func (m *brokerMetrics) forgetTopic(name string) {
	if m == nil {
		return
	}
	if _, ok := m.topics.LoadAndDelete(name); ok {
		m.messagesIn.DeleteLabelValues(name)
		m.bytesIn.DeleteLabelValues(name)
		m.bytesOut.DeleteLabelValues(name)
	}
}

// appended counts a batch of records appended to topic.
func (m *brokerMetrics) appended(topic string, records int, bytes int) {
	if m == nil {
		return // a broker built by hand in a unit test
	}
	t := m.topic(topic)
	t.messagesIn.Add(float64(records))
	t.bytesIn.Add(float64(bytes))
}

// sent counts record bytes a fetch sends from topic.
func (m *brokerMetrics) sent(topic string, bytes int64) {
	if m == nil {
		return
	}
	m.topic(topic).bytesOut.Add(float64(bytes))
}

// request counts one handled request of key that took d.
func (m *brokerMetrics) request(key int16, d time.Duration) {
	if m == nil || key < 0 || int(key) > maxAPIKey {
		return
	}
	if a := m.byKey[key]; a != nil {
		a.requests.Inc()
		a.totalTime.Observe(float64(d) / float64(time.Millisecond))
	}
}
