// Package obshttp is the one HTTP server of zkafka's operator endpoints:
// the Prometheus /metrics of both servers (ZooKeeper's
// metricsProvider.httpPort, the broker's zkafka.metrics.port) with their
// /healthz and /readyz, and ZooKeeper's AdminServer. Each is an
// http.Server on its own listener, shut down gracefully: Shutdown stops
// accepting and lets the requests in flight finish until its context
// ends, then closes what is left.
//
//	reg := obshttp.NewRegistry(true, myCollector)
//	srv, err := obshttp.Listen("127.0.0.1:7000", obshttp.MetricsHandler(reg, ready), log)
//	...
//	srv.Shutdown(ctx) // in-flight scrapes finish within ctx
package obshttp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry is a registry of cs and, with runtime, the Go runtime's and
// the process's collectors (go_*, process_*). Each server has its own, so
// that servers in one process (tests, zkafka run) do not mix metrics.
func NewRegistry(runtime bool, cs ...prometheus.Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	if runtime {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	reg.MustRegister(cs...)
	return reg
}

// MetricsHandler serves /metrics from g, /healthz (200 while the process
// serves HTTP at all: liveness) and /readyz (200 when ready returns nil,
// else 503 with its error: readiness).
func MetricsHandler(g prometheus.Gatherer, ready func() error) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	})
	return mux
}

// Server is one endpoint's HTTP server.
type Server struct {
	srv  *http.Server
	l    net.Listener
	done chan struct{} // closed when Serve returns
}

// Listen binds addr and serves h on it.
func Listen(addr string, h http.Handler, log *slog.Logger) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return Serve(l, h, 0, log), nil
}

// Serve serves h on l; idle > 0 closes keep-alive connections idle that
// long (the AdminServer's admin.idleTimeout).
func Serve(l net.Listener, h http.Handler, idle time.Duration, log *slog.Logger) *Server {
	s := &Server{
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       idle,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		},
		l:    l,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http endpoint stopped", "addr", l.Addr().String(), "err", err)
		}
	}()
	return s
}

// Addr is the listener's address (the port chosen for port 0).
func (s *Server) Addr() net.Addr { return s.l.Addr() }

// Shutdown stops accepting and waits for the requests in flight until ctx
// ends; then it closes the connections left, and returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	<-s.done
	return err
}
