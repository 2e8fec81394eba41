package quorum

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/zkafka/zkafka/internal/obshttp"
)

// observability is a server's HTTP endpoints: the Prometheus provider's
// /metrics (with /healthz and /readyz) and the AdminServer. Either is nil
// when not configured.
type observability struct {
	metrics, admin *obshttp.Server
}

// errNoLeader is /readyz's answer while an ensemble member knows no leader.
var errNoLeader = errors.New("no leader: this ZooKeeper instance is not currently serving requests")

// ready is /readyz: the server serves clients (standalone, or an ensemble
// member that knows a leader) and is not shutting down.
func (s *Server) ready() error {
	s.mu.Lock()
	closed := s.mu.closed
	s.mu.Unlock()
	switch {
	case closed:
		return ErrServerClosed
	case !s.serving():
		return errNoLeader
	}
	return nil
}

// startObservability opens the endpoints cfg asks for. A metrics port that
// cannot be bound fails the start (ZooKeeper's provider throws); an
// AdminServer port only logs a warning, as QuorumPeer.start does, since it
// is on by default and 8080 is often taken.
func (s *Server) startObservability() error {
	m, a := s.cfg.Metrics, s.cfg.Admin
	if m.Enabled {
		reg := obshttp.NewRegistry(m.ExportJvmInfo, zkCollector{s})
		srv, err := obshttp.Listen(m.addr(), obshttp.MetricsHandler(reg, s.ready), s.log)
		if err != nil {
			return fmt.Errorf("metricsProvider.httpPort: %w", err)
		}
		s.obs.metrics = srv
		s.log.Info("prometheus metrics", "addr", srv.Addr().String(), "path", "/metrics")
	}
	if a.Enabled {
		l, err := net.Listen("tcp", a.addr())
		if err != nil {
			s.log.Warn("problem starting AdminServer", "addr", a.addr(), "err", err)
			return nil
		}
		s.obs.admin = obshttp.Serve(l, s.adminHandler(a.CommandURL), a.IdleTimeout, s.log)
		s.log.Info("admin server", "addr", l.Addr().String(), "commandURL", a.CommandURL)
	}
	return nil
}

// stopObservability shuts the endpoints down; their requests in flight
// finish until ctx ends.
func (s *Server) stopObservability(ctx context.Context) error {
	var errs []error
	for _, srv := range []*obshttp.Server{s.obs.metrics, s.obs.admin} {
		if srv != nil {
			errs = append(errs, srv.Shutdown(ctx))
		}
	}
	return errors.Join(errs...)
}

// MetricsAddr is the Prometheus endpoint's address, nil when off.
func (s *Server) MetricsAddr() net.Addr {
	if s.obs.metrics == nil {
		return nil
	}
	return s.obs.metrics.Addr()
}

// AdminAddr is the AdminServer's address, nil when off.
func (s *Server) AdminAddr() net.Addr {
	if s.obs.admin == nil {
		return nil
	}
	return s.obs.admin.Addr()
}
