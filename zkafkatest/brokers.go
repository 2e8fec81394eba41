package zkafkatest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/internal/faultfs"
)

// brokerServer is one broker of the cluster. Clients reach it through the
// link Clients → it, the other brokers through their pair links to it
// (its inter-broker listener, INTERNAL, advertised at the link
// OtherBrokers → it; see interbroker.go); it reaches each ZooKeeper server
// through its own link.
type brokerServer struct {
	id  int32
	cfg broker.Config // as the broker starts, its links in it
	log *slog.Logger
	// listeners are the names of cfg.Listeners, in order; interBroker is
	// the one the other brokers use.
	listeners   []string
	interBroker string
	clientKeys  map[string]string // listener name → its Clients link's key (linkKey.listener)
	ownZK       bool              // the harness set its ZooKeeperConnect
	b           *broker.Broker    // nil while down
	served      chan error
	// fs is the running broker's partition logs' file system, which Kill
	// crashes (nil when ConfigureBroker set a LogFS of its own).
	fs *faultfs.FS
}

// ownKeys are the server.properties keys the harness sets itself.
var ownKeys = map[string]bool{"broker.id": true, "listeners": true, "advertised.listeners": true,
	"log.dirs": true, "log.dir": true, "zookeeper.connect": true, "listener.security.protocol.map": true,
	"inter.broker.listener.name": true, "security.inter.broker.protocol": true}

// interBrokerListener is the name of the brokers' listener for each other.
const interBrokerListener = "INTERNAL"

// newBrokers sets up the configs of the brokers and their links.
func (c *Cluster) newBrokers() error {
	var props strings.Builder
	userTimeout := false
	for _, kv := range c.cfg.brokerProps {
		if ownKeys[kv[0]] {
			return fmt.Errorf("zkafkatest: BrokerConfig(%q): the harness sets this key", kv[0])
		}
		userTimeout = userTimeout || kv[0] == "zookeeper.session.timeout.ms"
		fmt.Fprintf(&props, "%s=%s\n", kv[0], kv[1])
	}
	for i := 0; i < c.cfg.brokers; i++ {
		id := c.cfg.firstBroker + int32(i)
		cfg, err := broker.ParseProperties(strings.NewReader(props.String()), c.log)
		if err != nil {
			return fmt.Errorf("zkafkatest: BrokerConfig: %w", err)
		}
		addr := "127.0.0.1:0"
		if c.cfg.kafkaAddr != "" {
			if addr, err = offsetAddr(c.cfg.kafkaAddr, i); err != nil {
				return err
			}
		}
		cfg.BrokerID = id
		cfg.LogDirs, cfg.ZooKeeperConnect = nil, "" // the harness's (configure)
		cfg.Listeners = []string{"PLAINTEXT://127.0.0.1:0", interBrokerListener + "://127.0.0.1:0"}
		cfg.ListenerProtocols = map[string]string{"PLAINTEXT": "PLAINTEXT", interBrokerListener: "PLAINTEXT"}
		cfg.InterBroker.ListenerName = interBrokerListener
		if !userTimeout {
			cfg.ZooKeeperSessionTimeout = c.cfg.sessionLimit
		}
		for _, mod := range c.cfg.brokerMods {
			mod(&cfg)
		}
		if _, err := c.addBroker(cfg, c.log.With("server", Broker(id).String()), addr); err != nil {
			return err
		}
	}
	return nil
}

// startBroker starts broker s on its data, waits until it has registered
// (a registration left by a killed predecessor goes when that session
// expires) and points the link to it at its listener.
func (c *Cluster) startBroker(s *brokerServer) error {
	path, watched := c.registrationPath(s)
	var before *zk.Stat
	if watched {
		var err error
		if _, before, err = c.admin.Exists(path); err != nil {
			return err
		}
	}
	cfg := s.cfg
	s.fs = nil
	if cfg.LogFS == nil {
		s.fs = faultfs.New()
		cfg.LogFS = s.fs
	}
	b, err := broker.New(cfg, s.log)
	if err != nil {
		return fmt.Errorf("broker %d: %w", s.id, err)
	}
	var ls []net.Listener // one for each of s.listeners
	for range s.listeners {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			b.Shutdown(context.Background())
			return err
		}
		ls = append(ls, l)
	}
	s.b, s.served = b, make(chan error, 1)
	go func() { s.served <- b.ServeListeners(ls) }()
	for i, name := range s.listeners {
		for _, k := range c.listenerLinks(s, name) {
			k.setTarget(ls[i].Addr().String())
		}
	}
	if !watched {
		return nil
	}
	deadline := time.Now().Add(2*s.cfg.ZooKeeperSessionTimeout + 10*time.Second)
	for {
		ok, st, err := c.admin.Exists(path)
		if err == nil && ok && (before == nil || st.Czxid != before.Czxid) {
			return nil
		}
		select {
		case err := <-s.served:
			s.b = nil
			return fmt.Errorf("broker %d stopped serving: %w", s.id, err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("broker %d did not register in ZooKeeper", s.id)
		}
	}
}

// stopBroker shuts broker s down: gracefully (its connections finish,
// its ZooKeeper session closes, so /brokers/ids/{id} goes at once), or
// with hard (Kill) first silencing its links to ZooKeeper and closing
// those to it, so that its registration stays until its session expires
// and its clients see their connections end mid-request; then its logs
// lose what they had not synced (faultfs's Crash) and it stops without
// writing anything more (broker.Kill).
func (c *Cluster) stopBroker(s *brokerServer, hard bool) error {
	if s.b == nil {
		return fmt.Errorf("zkafkatest: %s is not running", Broker(s.id))
	}
	m := Broker(s.id)
	if hard {
		return c.killBroker(s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.b.Shutdown(ctx)
	served := <-s.served
	s.b = nil
	c.downBroker(m)
	if !errors.Is(served, broker.ErrServerClosed) {
		err = errors.Join(err, served)
	}
	return err
}

// killBroker is stopBroker's hard way. The broker's own stop reports
// its cut-short wait; only a failure to crash its files is an error.
func (c *Cluster) killBroker(s *brokerServer) error {
	m := Broker(s.id)
	c.net.silence(m, true)
	defer c.net.silence(m, false)
	c.downBroker(m)
	var err error
	if s.fs != nil {
		err = s.fs.Crash()
	}
	s.b.Kill()
	<-s.served
	s.b = nil
	c.downBroker(m)
	return err
}

// downBroker closes the links to broker m and refuses new connections.
func (c *Cluster) downBroker(m Member) {
	for _, k := range c.net.to(m) {
		k.setTarget("")
	}
}

// adminSession is the harness's own ZooKeeper session, through links no
// fault touches.
func (c *Cluster) adminSession() error {
	addrs := strings.Split(c.cfg.externalZK, ",")
	if c.cfg.externalZK == "" {
		addrs = nil
		for _, z := range c.zks {
			addrs = append(addrs, c.net.get(harness, ZooKeeperServer(z.id)).addr())
		}
	}
	conn, events, err := zk.Connect(addrs, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(discardZKLog{}))
	if err != nil {
		return err
	}
	for deadline := time.After(30 * time.Second); ; {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				c.admin = conn
				c.hooks.harnessSession.Store(conn.SessionID())
				go drain(events)
				return nil
			}
		case <-deadline:
			conn.Close()
			return errors.New("zkafkatest: no ZooKeeper session within 30 s")
		}
	}
}

func drain(events <-chan zk.Event) {
	for range events {
	}
}

type discardZKLog struct{}

func (discardZKLog) Printf(string, ...any) {}
