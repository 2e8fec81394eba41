package quorum

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/zkafka/zkafka/store/segment"
	"github.com/zkafka/zkafka/store/znode"
)

// Start opens the server's data, replays its log, and starts serving
// clients on cfg's client address. Standalone (no server.N lines) is an
// ensemble of one voter; with server.N lines it is the member myid of that
// ensemble (see ensemble.go).
func Start(cfg Config, log *slog.Logger) (*Server, error) {
	l, err := net.Listen("tcp", cfg.ClientAddr())
	if err != nil {
		return nil, fmt.Errorf("client port: %w", err)
	}
	s, err := StartWithListener(cfg, log, l)
	if err != nil {
		l.Close()
		return nil, err
	}
	return s, nil
}

// StartWithListener is Start with a listener the caller made (tests use
// 127.0.0.1:0).
func StartWithListener(cfg Config, log *slog.Logger, l net.Listener) (*Server, error) {
	return start(cfg, log, l, startOptions{})
}

// startOptions are what tests change in a server beyond its Config.
type startOptions struct {
	logFS segment.FS // the raft log's file system; nil: the operating system's
	// secure is the TLS client listener; nil: secureClientPort's, if set.
	secure net.Listener
}

// start is StartWithListener with test options.
func start(cfg Config, log *slog.Logger, l net.Listener, opts startOptions) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	cfg.fillDerived()
	for _, dir := range []string{cfg.DataDir, cfg.DataLogDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	secure, secureTLS, err := listenSecure(cfg, opts.secure)
	if err != nil {
		return nil, err
	}
	s := newServer(cfg, log, nil)
	s.clientAddr = l.Addr()
	started := false
	if secure != nil {
		s.secureAddr = secure.Addr()
		defer func() { // a start that fails closes what it opened
			if !started {
				secure.Close()
			}
		}()
	}
	s.tree.Store(znode.New(s.treeOptions()))
	s.setConfigNode(s.tree.Load())
	s.stats.configWritten(cfg)
	raftDir := filepath.Join(cfg.DataLogDir, "version-2")
	var repl *raftReplicator
	if len(cfg.Servers) > 0 {
		// An ensemble member starts without a quorum (its peers may not be
		// up yet); it serves once it knows a leader.
		var err error
		if repl, err = startEnsemble(s, raftDir, opts.logFS); err != nil {
			return nil, err
		}
		s.repl = repl
		s.goTracked("zk-ensemble", s.watchEnsemble)
	} else {
		var err error
		if repl, err = startRaft(s, raftDir, opts.logFS); err != nil {
			return nil, err
		}
		s.repl = repl
		if err := repl.ReadIndex(context.Background()); err != nil {
			repl.Stop()
			return nil, fmt.Errorf("catching up the log: %w", err)
		}
	}
	s.goTracked("zk-failstop", func() { s.watchNode(repl.node) })
	s.trackRestoredSessions()
	s.goTracked("zk-expiry", s.expireSessions)
	s.goTracked("zk-reaper", s.reapContainers)
	if err := s.startObservability(); err != nil {
		s.Shutdown(context.Background())
		return nil, err
	}
	s.goTracked("zk-listener", func() {
		if err := s.Serve(l); err != nil && err != ErrServerClosed {
			log.Error("client listener stopped", "err", err)
		}
	})
	if secure != nil {
		s.goTracked("zk-tls-listener", func() {
			if err := s.serveSecure(secure, secureTLS); err != nil {
				log.Error("TLS client listener stopped", "err", err)
			}
		})
	}
	started = true
	log.Info("zookeeper server started", "addr", l.Addr().String(), "secureAddr", addrText(s.secureAddr), "mode", s.mode(),
		"zxid", fmt.Sprintf("0x%x", s.tree.Load().LastZxid()), "nodes", s.tree.Load().NodeCount(),
		"sessions", len(s.tree.Load().Sessions()), "tickTime", cfg.TickTime)
	return s, nil
}

func addrText(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

// Addr returns the client listener's address.
func (s *Server) Addr() net.Addr { return s.clientAddr }

// Close shuts the server down, waiting at most a few seconds.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Shutdown(ctx)
}
