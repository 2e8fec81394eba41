package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/zkafka/zkafka/broker/controller"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/internal/accept"
	"github.com/zkafka/zkafka/internal/obshttp"
	"github.com/zkafka/zkafka/internal/tracked"
)

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("broker: server closed")

// Broker is a Kafka broker. Create it with New, run it with Serve (or
// ListenAndServe), stop it with Shutdown.
type Broker struct {
	cfg Config
	log *slog.Logger
	zk  *zkmeta.Client

	clusterID string
	// now is the clock for LogAppendTime and retention; tests replace it.
	now func() time.Time

	// cluster is the broker's view of ZooKeeper: topics (with the
	// partitions open here), brokers, controller.
	cluster cluster
	// dyn are the dynamic broker configs (dynamic_config.go).
	dyn atomic.Pointer[dynamicConfigs]
	// dynMu serializes loadDynamicConfigs (an AlterConfigs and the
	// config-change watcher both load), so that the configs read last are
	// the ones stored and applied last.
	dynMu sync.Mutex
	// meta is what the controller's UpdateMetadata requests said
	// (metadata_cache.go); Metadata answers from it.
	meta metadataCache

	// ctrl is whether this broker is the controller, with the epoch and
	// /controller_epoch version that fence its writes (set by ctl's loop).
	ctrl controllerState
	// ctl is the controller's loop (package broker/controller), started
	// with the cluster by the first Serve.
	ctl *controller.Controller

	// epochs fence the controller's requests (control_epochs.go).
	epochs controlEpochs

	// pids hands out producer ids from blocks reserved in ZooKeeper.
	pids producerIDs

	// groups is the group coordinator (group_coordinator.go).
	groups *coordinator
	// txns is the transaction coordinator (txn_coordinator.go).
	txns *txnCoordinator
	// txnOffsets indexes the pending offsets of transactions
	// (txn_offsets.go).
	txnOffsets txnOffsetIndex

	// txnVerify has the clients that verify transactional produce with
	// the transaction coordinators (KIP-890, txn_partition_verify.go).
	txnVerify txnVerifier

	// fetchSessions is the fetch session cache (fetch_session.go).
	fetchSessions *fetchSessionCache

	// budget bounds the request buffers of all connections together.
	budget *requestBudget

	// metrics are the request path's counters (metrics.go); metricsSrv
	// serves them when zkafka.metrics.port is set (metrics_http.go).
	metrics    *brokerMetrics
	metricsSrv *obshttp.Server
	// cleaner is the log cleaner of compacted topics (cleaner.go).
	cleaner *logCleaner
	// repl is the replica manager's state: fetchers, ISR changes, high
	// watermark checkpoints (replication.go).
	repl replication

	// tlsCfgs serve the SSL and SASL_SSL listeners, by listener name
	// (tls.go).
	tlsCfgs map[string]*tls.Config
	// interBrokerMech is this broker's SASL login to other brokers (nil
	// unless the inter-broker listener is SASL; interbroker_sasl.go).
	interBrokerMech sasl.Mechanism
	// sasl are the SASL listeners, by name (sasl.go); scram the SCRAM
	// credentials (scram_store.go).
	sasl  map[string]*saslListener
	scram *scramStore
	// quotas are the client quotas and their meters (quota_manager.go);
	// nil in tests that build a Broker by hand (nothing is throttled).
	quotas *quotaManager
	// acls is the ACL authorizer (nil without authorizer.class.name;
	// acl_authorizer.go), set by New.
	acls *aclAuthorizer

	registerOnce sync.Once
	registered   chan struct{} // closed once /brokers/ids/{id} exists

	mu struct {
		sync.Mutex
		listeners map[net.Listener]struct{}
		conns     map[*conn]struct{}
		stopping  bool // Shutdown was called (its controlled shutdown may still run)
		closing   bool // Shutdown has begun closing: no new goroutines or connections
	}
	goroutines tracked.Group
	done       chan struct{} // closed by Shutdown

	// test hook: bytes of record data copied through user space on the
	// fetch path (must stay 0 on sockets that support sendfile).
	copiedRecordBytes atomic.Int64
}

// New connects to ZooKeeper (zookeeper.connect, waiting up to the session
// timeout), creates Kafka's top-level znodes and the cluster id if
// missing, loads every topic and opens the partitions this broker leads.
// The broker registers itself in /brokers/ids when Serve starts, since only
// then is its address known.
func New(cfg Config, log *slog.Logger) (*Broker, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.ZooKeeperSessionTimeout <= 0 {
		cfg.ZooKeeperSessionTimeout = 18 * time.Second
	}
	if cfg.LogRetentionCheck <= 0 {
		cfg.LogRetentionCheck = 5 * time.Minute
	}
	b := &Broker{cfg: cfg, log: log.With("broker", cfg.BrokerID), now: time.Now,
		registered: make(chan struct{}), done: make(chan struct{})}
	b.mu.listeners = map[net.Listener]struct{}{}
	b.mu.conns = map[*conn]struct{}{}
	b.budget = newRequestBudget(cfg.QueuedMaxRequestBytes, budgetPatience)
	b.metrics = newBrokerMetrics()
	b.fetchSessions = newFetchSessionCache(cfg.Replication.FetchSessionCacheSlots)
	b.cluster.init()
	if err := b.initTLS(); err != nil {
		return nil, err
	}
	if err := b.initSASL(); err != nil {
		return nil, err
	}
	var err error
	if b.interBrokerMech, err = cfg.interBrokerSASL(); err != nil {
		return nil, err
	}
	b.scram = newScramStore(b)
	b.quotas = newQuotaManager(cfg.Quota, b.now)
	b.initReplication()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ZooKeeperSessionTimeout)
	defer cancel()
	sec, err := cfg.zkSecurity()
	if err != nil {
		return nil, err
	}
	zkc, err := zkmeta.DialSecure(ctx, cfg.ZooKeeperConnect, cfg.ZooKeeperSessionTimeout, b.log, sec)
	if err != nil {
		return nil, err
	}
	b.zk = zkc
	b.loadDynamicConfigs()
	if err := b.bootstrap(); err != nil {
		zkc.Close()
		b.closePartitions()
		return nil, err
	}
	if err := b.scram.loadAll(); err != nil {
		zkc.Close()
		b.closePartitions()
		return nil, fmt.Errorf("loading SCRAM credentials from %s: %w", zkmeta.ConfigUsersPath, err)
	}
	if err := b.loadQuotas(); err != nil {
		zkc.Close()
		b.closePartitions()
		return nil, fmt.Errorf("loading client quotas from /config/users and /config/clients: %w", err)
	}
	b.goTracked("retention", b.retentionLoop)
	b.cleaner = newLogCleaner(b)
	b.cleaner.start()
	b.groups = newCoordinator(b)
	b.groups.start()
	b.txns = newTxnCoordinator(b)
	b.txns.start()
	if err := b.startMetrics(); err != nil {
		b.Shutdown(context.Background())
		return nil, err
	}
	return b, nil
}

// bootstrap prepares ZooKeeper and loads the cluster metadata.
func (b *Broker) bootstrap() error {
	for _, p := range zkmeta.PersistentPaths {
		if err := b.zk.EnsurePersistent(p); err != nil {
			return err
		}
	}
	id, err := b.loadClusterID()
	if err != nil {
		return err
	}
	b.clusterID = id
	if err := b.loadAllTopics(); err != nil {
		return err
	}
	if err := b.initAuthorizer(); err != nil {
		return err
	}
	b.log.Info("broker loaded cluster metadata", "cluster_id", id, "topics", b.cluster.topicCount())
	return nil
}

// Serve accepts connections on l, the first configured listener, until
// Shutdown (see ServeListeners). It always returns a non-nil error;
// ErrServerClosed after Shutdown.
func (b *Broker) Serve(l net.Listener) error {
	return b.ServeListeners([]net.Listener{l})
}

// ServeListeners accepts connections on ls until Shutdown, ls[i] serving
// the configured listener i (its name, and TLS if its protocol is SSL).
// The first call registers the broker in /brokers/ids (with the
// advertised listeners, or the addresses of ls), runs for controller and
// starts the ZooKeeper watches. It returns when every accept loop has
// ended, with the first error; ErrServerClosed after Shutdown.
func (b *Broker) ServeListeners(ls []net.Listener) error {
	entries, err := b.cfg.listenerEntries(b.cfg.Listeners)
	if err != nil {
		return err
	}
	if len(ls) == 0 || len(ls) > len(entries) {
		return fmt.Errorf("broker: %d listeners given for %d configured", len(ls), len(entries))
	}
	addrs := make([]net.Addr, len(ls))
	for i, l := range ls {
		if !b.trackListener(l, true) {
			return ErrServerClosed
		}
		defer b.trackListener(l, false)
		addrs[i] = l.Addr()
	}
	var regErr error
	b.registerOnce.Do(func() { regErr = b.startCluster(addrs) })
	if regErr != nil {
		return regErr
	}
	errs := make(chan error, len(ls))
	for i, l := range ls {
		go func() { errs <- b.acceptLoop(l, entries[i]) }()
	}
	first := <-errs
	for range len(ls) - 1 {
		<-errs
	}
	return first
}

// acceptLoop serves one listener through the shared accept loop; an SSL
// listener's connections are wrapped in TLS (the handshake runs on the
// connection's first read, in its own goroutine).
func (b *Broker) acceptLoop(l net.Listener, e listenerEntry) error {
	handle := func(nc net.Conn) { b.serveConn(nc, e.name, false) }
	if isTLSProtocol(e.protocol) {
		handle = func(nc net.Conn) { b.serveConn(tls.Server(nc, b.tlsCfgs[e.name]), e.name, true) }
	}
	err := accept.Loop(l, b.done, b.log, "kafka "+e.name, handle)
	if err == accept.ErrClosed {
		return ErrServerClosed
	}
	return err
}

// serveConn starts serving one accepted connection of listener, unless
// Shutdown has begun (then it closes it).
func (b *Broker) serveConn(nc net.Conn, listener string, isTLS bool) {
	c := newConn(b, nc)
	c.listener, c.tls = listener, isTLS
	if !b.trackConn(c, true) {
		nc.Close()
		return
	}
	if !b.goTracked("kafka-conn", c.serve) {
		b.trackConn(c, false)
		nc.Close()
	}
}

// ListenAndServe listens on every configured listener and serves them.
func (b *Broker) ListenAndServe() error {
	entries, err := b.cfg.listenerEntries(b.cfg.Listeners)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("broker: no listeners configured")
	}
	var ls []net.Listener
	for _, e := range entries {
		l, err := net.Listen("tcp", e.addr)
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return err
		}
		ls = append(ls, l)
	}
	return b.ServeListeners(ls)
}

// Shutdown first moves leadership off the broker while it still serves
// (a controlled shutdown, shutdown_controlled.go: at most half of ctx's
// time), then stops accepting, lets each connection finish the request it
// is handling and write its queued responses, wakes waiting fetches,
// gives up control (deleting /controller if it holds it), and closes the
// partitions and the ZooKeeper session (which removes /brokers/ids/{id}).
// If ctx ends first the connections are closed hard and ctx's error
// returned.
func (b *Broker) Shutdown(ctx context.Context) error { return b.shutdown(ctx, true) }

// shutdown is Shutdown, or with clean false Kill's stop (kill.go).
func (b *Broker) shutdown(ctx context.Context, clean bool) error {
	b.mu.Lock()
	if b.mu.stopping {
		b.mu.Unlock()
		return nil
	}
	b.mu.stopping = true
	b.mu.Unlock()
	// While it still serves, the broker moves its leadership away.
	if clean {
		b.controlledShutdown(ctx)
	}
	b.mu.Lock()
	b.mu.closing = true
	b.goroutines.Close()
	close(b.done)
	b.txnVerify.close() // ends the verifications in flight (txn_partition_verify.go)
	b.repl.fetchers.Stop()
	for l := range b.mu.listeners {
		l.Close()
	}
	for c := range b.mu.conns {
		c.stopReading()
	}
	b.mu.Unlock()
	b.resignControl()
	err := b.goroutines.Wait(ctx)
	if err != nil {
		b.mu.Lock()
		for c := range b.mu.conns {
			c.nc.Close()
		}
		b.mu.Unlock()
		b.goroutines.Wait(context.Background())
	}
	b.groups.stop()
	b.txns.stop()
	if clean {
		b.checkpointHighWatermarks()
		b.closePartitions()
	} else {
		b.abandonPartitions()
	}
	b.zk.Close()
	return errors.Join(err, b.stopMetrics(ctx))
}

// goTracked starts fn in one of the broker's tracked goroutines (labelled
// name for pprof, waited for by Shutdown). It refuses (returns false) once
// Shutdown has begun.
func (b *Broker) goTracked(name string, fn func()) bool {
	return b.goroutines.Go(name, fn)
}

func (b *Broker) trackListener(l net.Listener, add bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if add {
		if b.mu.closing {
			return false
		}
		b.mu.listeners[l] = struct{}{}
	} else {
		delete(b.mu.listeners, l)
	}
	return true
}

func (b *Broker) trackConn(c *conn, add bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if add {
		if b.mu.closing {
			return false
		}
		b.mu.conns[c] = struct{}{}
	} else {
		delete(b.mu.conns, c)
	}
	return true
}

// sleep waits d or until Shutdown; it reports false on Shutdown.
func (b *Broker) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-b.done:
		return false
	}
}
