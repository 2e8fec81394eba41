package broker

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// stateCollector serves the broker's state as gauges, read at each scrape
// from the metadata cache, the partitions' logs and the group coordinator
// (the same sources Metadata, ListOffsets and OffsetFetch answer from).
type stateCollector struct{ b *Broker }

var (
	descUnderReplicated = prometheus.NewDesc("kafka_server_replicamanager_underreplicatedpartitions",
		"Partitions this broker leads whose ISR is smaller than their replica set.", nil, nil)
	descPartitionCount = prometheus.NewDesc("kafka_server_replicamanager_partitioncount",
		"Partitions with a replica on this broker.", nil, nil)
	descLeaderCount = prometheus.NewDesc("kafka_server_replicamanager_leadercount",
		"Partitions this broker leads.", nil, nil)
	descActiveController = prometheus.NewDesc("kafka_controller_kafkacontroller_activecontrollercount",
		"1 on the broker that is the controller.", nil, nil)
	descOffline = prometheus.NewDesc("kafka_controller_kafkacontroller_offlinepartitionscount",
		"Partitions without a live leader (on the controller; 0 elsewhere, as Kafka).", nil, nil)
	partitionLabels = []string{"topic", "partition"}
	descLogSize     = prometheus.NewDesc("kafka_log_log_size", "Bytes of a partition's log on disk.", partitionLabels, nil)
	descLogEnd      = prometheus.NewDesc("kafka_log_log_logendoffset", "A partition's log end offset.", partitionLabels, nil)
	descLogStart    = prometheus.NewDesc("kafka_log_log_logstartoffset", "A partition's log start offset.", partitionLabels, nil)
	groupLabels     = []string{"consumergroup", "topic", "partition"}
	descGroupOffset = prometheus.NewDesc("kafka_consumergroup_current_offset",
		"A group's committed offset of a partition this broker leads.", groupLabels, nil)
	descGroupLag = prometheus.NewDesc("kafka_consumergroup_lag",
		"Log end offset minus a group's committed offset, for partitions this broker leads.", groupLabels, nil)
)

func (stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUnderReplicated, descPartitionCount, descLeaderCount, descActiveController,
		descOffline, descLogSize, descLogEnd, descLogStart, descGroupOffset, descGroupLag} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	b := c.b
	self := b.cfg.BrokerID
	isController := b.cluster.controllerID() == self
	var under, count, leading, offline int
	for _, t := range b.cluster.allTopics() {
		for p, replicas := range t.replicas {
			if isController && (t.leaders[p] < 0 || !b.cluster.isLive(t.leaders[p])) {
				offline++
			}
			if !contains(replicas, self) {
				continue
			}
			count++
			part := t.partition(int32(p))
			if part == nil {
				continue
			}
			leading++
			if len(t.isr[p]) < len(replicas) {
				under++
			}
			labels := []string{t.name, strconv.Itoa(p)}
			ch <- gauge(descLogSize, float64(part.log.Size()), labels...)
			ch <- gauge(descLogEnd, float64(part.log.NextOffset()), labels...)
			ch <- gauge(descLogStart, float64(part.log.StartOffset()), labels...)
		}
	}
	ch <- gauge(descUnderReplicated, float64(under))
	ch <- gauge(descPartitionCount, float64(count))
	ch <- gauge(descLeaderCount, float64(leading))
	ch <- gauge(descActiveController, boolFloat(isController))
	ch <- gauge(descOffline, float64(offline))
	if b.groups != nil {
		c.collectLag(ch)
	}
}

// collectLag serves the committed offsets of the groups this broker
// coordinates, for the partitions it leads (the log end offset of others
// is not known here).
func (c stateCollector) collectLag(ch chan<- prometheus.Metric) {
	type commit struct {
		group string
		tp    topicPartition
		off   int64
	}
	var commits []commit
	c.b.groups.mu.Lock()
	groups := make([]*group, 0, len(c.b.groups.mu.groups))
	for _, g := range c.b.groups.mu.groups {
		groups = append(groups, g)
	}
	c.b.groups.mu.Unlock()
	for _, g := range groups {
		g.mu.Lock()
		for tp, o := range g.offsets {
			commits = append(commits, commit{g.name, tp, o.offset})
		}
		g.mu.Unlock()
	}
	for _, cm := range commits {
		t := c.b.cluster.topic(cm.tp.topic)
		if t == nil {
			continue
		}
		part := t.partition(cm.tp.partition)
		if part == nil {
			continue
		}
		labels := []string{cm.group, cm.tp.topic, strconv.Itoa(int(cm.tp.partition))}
		ch <- gauge(descGroupOffset, float64(cm.off), labels...)
		ch <- gauge(descGroupLag, float64(max(part.highWatermark()-cm.off, 0)), labels...)
	}
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func contains(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
