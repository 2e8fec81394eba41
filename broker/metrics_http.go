package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/zkafka/zkafka/internal/obshttp"
)

// MetricsConfig is the broker's Prometheus endpoint. Kafka has none of its
// own (it exports JMX MBeans, which an exporter turns into Prometheus
// metrics); zkafka serves the exporter's names itself, configured by two
// keys of its own in server.properties:
//
//	zkafka.metrics.port   the port of /metrics, /healthz and /readyz:
//	                      -1 (the default) for none, 0 for any free port
//	zkafka.metrics.host   the address it listens on (default 0.0.0.0)
type MetricsConfig struct {
	Port int    // -1: no endpoint
	Host string // default 0.0.0.0
}

// DefaultMetricsConfig has no endpoint.
func DefaultMetricsConfig() MetricsConfig { return MetricsConfig{Port: -1, Host: "0.0.0.0"} }

// Enabled reports whether the endpoint is configured.
func (m MetricsConfig) Enabled() bool { return m.Port >= 0 }

func (m MetricsConfig) addr() string {
	host := m.Host
	if host == "" {
		host = "0.0.0.0"
	}
	return net.JoinHostPort(host, strconv.Itoa(m.Port))
}

// parseProperty applies a zkafka.metrics.* key; ok is false for others.
func (m *MetricsConfig) parseProperty(k, v string) (ok bool, err error) {
	switch k {
	case "zkafka.metrics.port":
		n, perr := strconv.Atoi(v)
		if perr != nil || n < -1 || n > 65535 {
			return true, errors.New("must be a port from 1 to 65535, 0 for any free port, or -1 for no metrics endpoint")
		}
		m.Port = n
	case "zkafka.metrics.host":
		if v == "" || net.ParseIP(v) == nil && !validHostName(v) {
			return true, errors.New("must be a host name or an IP address (without a port)")
		}
		m.Host = v
	default:
		return false, nil
	}
	return true, nil
}

func validHostName(h string) bool {
	for _, r := range h {
		if !(r == '-' || r == '.' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// errNotRegistered and errNotServing are /readyz's answers.
var (
	errNotRegistered = errors.New("not registered in ZooKeeper (/brokers/ids) yet")
	errNotServing    = errors.New("no listener is serving")
)

// ready is /readyz: the broker is registered in /brokers/ids and serves a
// listener, and is not shutting down.
func (b *Broker) ready() error {
	select {
	case <-b.done:
		return ErrServerClosed
	default:
	}
	select {
	case <-b.registered:
	default:
		return errNotRegistered
	}
	b.mu.Lock()
	n := len(b.mu.listeners)
	b.mu.Unlock()
	if n == 0 {
		return errNotServing
	}
	return nil
}

// startMetrics opens the endpoint when configured.
func (b *Broker) startMetrics() error {
	if !b.cfg.Metrics.Enabled() {
		return nil
	}
	cs := append(b.metrics.collectors(), stateCollector{b})
	srv, err := obshttp.Listen(b.cfg.Metrics.addr(), obshttp.MetricsHandler(obshttp.NewRegistry(true, cs...), b.ready), b.log)
	if err != nil {
		return fmt.Errorf("zkafka.metrics.port: %w", err)
	}
	b.metricsSrv = srv
	b.log.Info("prometheus metrics", "addr", srv.Addr().String(), "path", "/metrics")
	return nil
}

// stopMetrics shuts the endpoint down; scrapes in flight finish until ctx
// ends.
func (b *Broker) stopMetrics(ctx context.Context) error {
	if b.metricsSrv == nil {
		return nil
	}
	return b.metricsSrv.Shutdown(ctx)
}

// MetricsAddr is the metrics endpoint's address, nil when there is none.
func (b *Broker) MetricsAddr() net.Addr {
	if b.metricsSrv == nil {
		return nil
	}
	return b.metricsSrv.Addr()
}
