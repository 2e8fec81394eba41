package quorum

import (
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/zkafka/zkafka/internal/properties"
)

// The class names metricsProvider.className may take: Apache ZooKeeper's
// Prometheus provider (zkafka serves its metrics, metrics.go) and its
// default provider, which has no endpoint.
const (
	prometheusProviderClass = "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider"
	defaultProviderClass    = "org.apache.zookeeper.metrics.impl.DefaultMetricsProvider"
)

// MetricsConfig is zoo.cfg's metricsProvider.* keys, as Apache ZooKeeper
// 3.8's PrometheusMetricsProvider.configure reads them.
type MetricsConfig struct {
	// Enabled: metricsProvider.className is the Prometheus provider.
	Enabled bool
	// Host, Port: metricsProvider.httpHost (default 0.0.0.0) and
	// metricsProvider.httpPort (default 7000; 0 picks a free port, which
	// MetricsAddr reports).
	Host string
	Port int
	// ExportJvmInfo: metricsProvider.exportJvmInfo (default true). A Go
	// process has no JVM: it adds the Go runtime's and the process's
	// collectors (go_*, process_*) in place of the JVM's (jvm_*).
	ExportJvmInfo bool
}

// AdminConfig is the AdminServer's keys (ZooKeeper reads them as the
// zookeeper.admin.* system properties, which zoo.cfg sets).
type AdminConfig struct {
	// Enabled: admin.enableServer. ZooKeeper 3.8's default is true, and so
	// is a zoo.cfg's here; DefaultConfig (the Go API, tests) leaves it off
	// so that servers built in code open no port they were not given.
	Enabled bool
	// Address, Port: admin.serverAddress (default 0.0.0.0) and
	// admin.serverPort (default 8080; 0 picks a free port).
	Address string
	Port    int
	// CommandURL: admin.commandURL (default /commands).
	CommandURL string
	// IdleTimeout: admin.idleTimeout (default 30 s), the idle connection
	// timeout of ZooKeeper's Jetty.
	IdleTimeout time.Duration
}

func defaultMetricsConfig() MetricsConfig {
	return MetricsConfig{Host: "0.0.0.0", Port: 7000, ExportJvmInfo: true}
}

func defaultAdminConfig() AdminConfig {
	return AdminConfig{Address: "0.0.0.0", Port: 8080, CommandURL: "/commands", IdleTimeout: 30 * time.Second}
}

// addr is the metrics listener's address.
func (m MetricsConfig) addr() string { return net.JoinHostPort(m.Host, strconv.Itoa(m.Port)) }

// addr is the AdminServer's listener address.
func (a AdminConfig) addr() string { return net.JoinHostPort(a.Address, strconv.Itoa(a.Port)) }

// applyObservability parses the metricsProvider.* and admin.* keys zkafka
// acts on; ok is false for any other key. ZooKeeper's other keys of these
// families (the Prometheus provider's worker pool, the AdminServer's TLS)
// stay in ignoredPrefixes.
func (p *configParser) applyObservability(prop properties.Property) (ok bool, err error) {
	m, a := &p.c.Metrics, &p.c.Admin
	v := prop.Trimmed()
	switch strings.TrimPrefix(prop.Key, "zookeeper.") {
	case "metricsProvider.className":
		switch v {
		case prometheusProviderClass:
			m.Enabled = true
		case defaultProviderClass:
			m.Enabled = false
		default:
			err = prop.Bad("must be " + prometheusProviderClass + " (a Prometheus /metrics endpoint) or " + defaultProviderClass + " (none)")
		}
	case "metricsProvider.httpHost":
		m.Host, err = hostProp(prop, v)
	case "metricsProvider.httpPort":
		m.Port, err = anyPortProp(prop)
	case "metricsProvider.exportJvmInfo":
		m.ExportJvmInfo, err = prop.Bool()
	case "metricsProvider.numWorkerThreads", "metricsProvider.maxQueueSize":
		err = checkInt(prop) // Integer.parseInt; zkafka's collectors need no worker pool
	case "metricsProvider.workerShutdownTimeoutMs":
		err = checkLong(prop)
	case "admin.enableServer":
		a.Enabled, err = prop.Bool()
	case "admin.serverAddress":
		a.Address, err = hostProp(prop, v)
	case "admin.serverPort":
		a.Port, err = anyPortProp(prop)
	case "admin.commandURL":
		if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " ?#") {
			err = prop.Bad("must be a URL path starting with / (default /commands)")
		}
		a.CommandURL = strings.TrimSuffix(v, "/")
		if a.CommandURL == "" {
			a.CommandURL = "/"
		}
	case "admin.idleTimeout":
		err = millis(prop, 1, 1<<31-1, &a.IdleTimeout)
	default:
		return false, nil
	}
	return true, err
}

// anyPortProp is a listening port: 1-65535, or 0 for a free port.
func anyPortProp(prop properties.Property) (int, error) {
	n, err := prop.Int(0, 65535)
	if err != nil {
		return 0, prop.Bad("must be a port from 1 to 65535, or 0 for any free port")
	}
	return int(n), nil
}
