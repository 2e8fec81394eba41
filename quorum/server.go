package quorum

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkafka/zkafka/internal/accept"
	"github.com/zkafka/zkafka/internal/tracked"
	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/znode"
)

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("quorum: server closed")

// replicator is what the server needs from the replicated log: ordered
// asynchronous proposals and a linearizable read barrier.
type replicator interface {
	// ProposeAsync appends data to the log; proposals made by one goroutine
	// enter the log in the order they were made. The channel yields the
	// state machine's result once the entry is applied locally.
	ProposeAsync(data []byte) <-chan proposeResult
	// ReadIndex returns once the local state has applied everything the
	// leader had committed when it was called.
	ReadIndex(ctx context.Context) error
	Stop() error
}

// framedProposer is a replicator that takes a proposal behind room for its
// own framing (raftReplicator: raftnode.FrameSize bytes), so that a txn is
// encoded straight into the buffer its log entry is framed in.
type framedProposer interface {
	ProposeFramed(buf []byte) <-chan proposeResult
}

// proposeTxn proposes txn as ProposeAsync does its encoding, into a buffer
// sized to fit. txn does not escape: a request's Txn and its ops stay on
// the stack.
func (s *Server) proposeTxn(txn *znode.Txn) <-chan proposeResult {
	if p, ok := s.repl.(framedProposer); ok {
		return p.ProposeFramed(txn.Append(make([]byte, raftnode.FrameSize, raftnode.FrameSize+txn.Size())))
	}
	return s.repl.ProposeAsync(txn.Append(make([]byte, 0, txn.Size())))
}

// proposeResult is an applied proposal's outcome.
type proposeResult struct {
	applied *appliedTxn
	err     error
}

// appliedTxn is what applying one txn produced.
type appliedTxn struct {
	zxid    int64
	results []znode.Result
	one     [1]znode.Result // results' room for a txn of one op (all but multis), saving an allocation
}

// Server is a ZooKeeper server: the client listener and the request
// pipeline over the replicated data tree.
type Server struct {
	cfg Config
	log *slog.Logger
	// saslFailureDelay holds back the answer to a failed SASL exchange
	// (sasl.go; tests shorten it).
	saslFailureDelay time.Duration
	tree             atomic.Pointer[znode.Tree]
	repl             replicator
	ens              *ensemble // nil when standalone
	watches          *watchManager
	tracker          *sessionTracker
	ids              *sessionIDs
	stats            *serverStats
	started          time.Time
	// clientAddr is the client listener's address, set before serving.
	clientAddr net.Addr
	secureAddr net.Addr // the TLS client listener's; nil: none (secure.go)
	// obs is the metrics and admin endpoints (metrics_http.go), set at
	// start, before serving.
	obs observability

	// failed yields, once, the error that stopped the server on its own
	// (see Failed); buffered 1.
	failed chan error

	mu struct {
		sync.Mutex
		conns     map[*conn]struct{}
		bySession map[int64]*conn
		perIP     map[string]int
		listeners []net.Listener
		closed    bool
	}
	goroutines tracked.Group
	done       chan struct{}

	// applyMu makes a txn's apply and its watch events one step for the
	// reads: Apply holds it from the tree's update to the last event
	// queued, a read holds it for reading while it looks at the tree. A
	// read that sees a change thus runs after the change's events are in
	// its connection's queue, and the writer sends them before the reply.
	applyMu sync.RWMutex
	// events is apply's scratch list of a txn's watch events, reused from
	// txn to txn; guarded by applyMu (W).
	events []znode.Event

	quotaLog quotaLog // see logQuotaWarnings

	// members is the configuration after the last reconfig; nil: zoo.cfg's
	// (reconfig_request.go).
	members atomic.Pointer[members]
}

// newServer builds a server around a tree; the caller attaches repl.
func newServer(cfg Config, log *slog.Logger, tree *znode.Tree) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{
		cfg:     cfg,
		log:     log,
		watches: newWatchManager(),
		tracker: newSessionTracker(),
		ids:     newSessionIDs(cfg.MyID, time.Now()),
		stats:   newServerStats(),
		started: time.Now(),
		done:    make(chan struct{}),
		failed:  make(chan error, 1),

		saslFailureDelay: saslFailureDelay,
	}
	s.tree.Store(tree)
	s.mu.conns = map[*conn]struct{}{}
	s.mu.bySession = map[int64]*conn{}
	s.mu.perIP = map[string]int{}
	return s
}

// goTracked starts f in one of the server's tracked goroutines (labelled
// name for pprof, waited for by Shutdown); it refuses once shutdown has
// begun.
func (s *Server) goTracked(name string, f func()) bool {
	return s.goroutines.Go(name, f)
}

// Serve accepts client connections on l until Shutdown. It always returns a
// non-nil error; after Shutdown it is ErrServerClosed.
func (s *Server) Serve(l net.Listener) error {
	return s.serve(l, "zookeeper clients", s.accept)
}

// serve runs the accept loop of l, handing each connection to handle.
func (s *Server) serve(l net.Listener, what string, handle func(net.Conn)) error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.mu.listeners = append(s.mu.listeners, l)
	s.mu.Unlock()
	err := accept.Loop(l, s.done, s.log, what, handle)
	if err == accept.ErrClosed {
		return ErrServerClosed
	}
	return err
}

// accept registers a new connection and starts its goroutines.
func (s *Server) accept(nc net.Conn) {
	ip := remoteIP(nc)
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		nc.Close()
		return
	}
	if s.cfg.MaxClientCnxns > 0 && s.mu.perIP[ip] >= s.cfg.MaxClientCnxns {
		s.mu.Unlock()
		s.log.Warn("too many connections from one address; closing", "addr", ip, "max", s.cfg.MaxClientCnxns)
		nc.Close()
		return
	}
	c := newConn(s, nc)
	s.mu.conns[c] = struct{}{}
	s.mu.perIP[ip]++
	s.mu.Unlock()
	if !s.goTracked("zk-conn", c.serve) {
		// Shutdown began since c was registered: nobody will serve it.
		s.removeConn(c)
		nc.Close()
	}
}

// removeConn forgets a closed connection.
func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mu.conns[c]; !ok {
		return
	}
	delete(s.mu.conns, c)
	if s.mu.perIP[c.ip]--; s.mu.perIP[c.ip] <= 0 {
		delete(s.mu.perIP, c.ip)
	}
	if id := c.sessionID(); id != 0 && s.mu.bySession[id] == c {
		delete(s.mu.bySession, id)
	}
}

// attach makes c the connection of session id, closing the previous one.
func (s *Server) attach(id int64, c *conn) {
	s.mu.Lock()
	prev := s.mu.bySession[id]
	s.mu.bySession[id] = c
	s.mu.Unlock()
	if prev != nil && prev != c {
		prev.close("session moved to a new connection")
	}
}

// connOf returns the connection that holds session id on this server.
func (s *Server) connOf(id int64) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.bySession[id]
}

// connections returns a snapshot of the open connections.
func (s *Server) connections() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*conn, 0, len(s.mu.conns))
	for c := range s.mu.conns {
		out = append(out, c)
	}
	return out
}

// Shutdown stops accepting, lets every connection answer the requests it
// has read (within shutdownDrain and ctx, drain.go) and closes it, stops
// the metrics and admin endpoints and the replicated log, and waits for
// the server's goroutines until ctx ends. Sessions survive a
// shutdown: a client that reconnects after a restart within its timeout
// keeps its session.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.closed = true
	s.goroutines.Close()
	close(s.done)
	for _, l := range s.mu.listeners {
		l.Close()
	}
	conns := make([]*conn, 0, len(s.mu.conns))
	for c := range s.mu.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	obsErr := s.stopObservability(ctx)
	err := errors.Join(s.drainConnections(ctx, conns), obsErr)
	if s.repl != nil {
		if stopErr := s.repl.Stop(); err == nil {
			err = stopErr
		}
	}
	return err
}

func remoteIP(nc net.Conn) string {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return nc.RemoteAddr().String()
}

// String describes the server for logs.
func (s *Server) String() string { return fmt.Sprintf("zookeeper server %d", s.cfg.MyID) }
