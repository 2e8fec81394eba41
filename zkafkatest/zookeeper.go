package zkafkatest

import (
	"context"
	"fmt"
	"github.com/zkafka/zkafka/internal/freeport"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/zkafka/zkafka/quorum"
)

// zkServer is one ZooKeeper server of the cluster. Its clients, the
// brokers and its peers reach it through links; its own config names its
// peers by the links from it to them.
type zkServer struct {
	id       int32
	cfg      quorum.Config
	srv      *quorum.Server // nil while down
	peerPort int            // the real peer port it binds (ensemble only)
	addr     string         // its client listener's address; "" while down
}

// zkTickTime is the test servers' tickTime: short, so that elections and
// session expiry are quick, yet long enough for a loaded machine.
const zkTickTime = 200 * time.Millisecond

// newZKServers sets up the configs of n servers and the links to them.
func (c *Cluster) newZKServers(n int) error {
	for i := 1; i <= n; i++ {
		id := int32(i)
		addr := "127.0.0.1:0"
		if c.cfg.zkAddr != "" {
			var err error
			if addr, err = offsetAddr(c.cfg.zkAddr, i-1); err != nil {
				return err
			}
		}
		if _, err := c.net.add(Clients, ZooKeeperServer(id), addr); err != nil {
			return err
		}
		if _, err := c.net.add(harness, ZooKeeperServer(id), "127.0.0.1:0"); err != nil {
			return err
		}
		s := &zkServer{id: id}
		if n > 1 {
			p, err := freePort()
			if err != nil {
				return err
			}
			s.peerPort = p
		}
		c.zks = append(c.zks, s)
	}
	if n > 1 {
		for _, a := range c.zks {
			for _, b := range c.zks {
				if a == b {
					continue
				}
				k, err := c.net.add(ZooKeeperServer(a.id), ZooKeeperServer(b.id), "127.0.0.1:0")
				if err != nil {
					return err
				}
				// The peer port is fixed: the link forwards to it even
				// while b is down (its connections are then refused).
				k.setTarget(net.JoinHostPort("127.0.0.1", strconv.Itoa(b.peerPort)))
			}
		}
	}
	for _, s := range c.zks {
		s.cfg = c.zkConfig(s, n)
	}
	return nil
}

// zkConfig is server s's configuration: test settings (short tick, no
// AdminServer, no connection limit), its data under the cluster's
// directory, and in an ensemble server.N lines whose peers are the links
// from s.
func (c *Cluster) zkConfig(s *zkServer, n int) quorum.Config {
	cfg := quorum.DefaultConfig(filepath.Join(c.dir, "zookeeper-"+strconv.Itoa(int(s.id))))
	cfg.TickTime = zkTickTime
	cfg.MinSessionTimeout = 2 * zkTickTime
	cfg.MaxSessionTimeout = time.Minute
	cfg.MaxClientCnxns = 0
	cfg.Admin.Enabled = false
	cfg.ContainerInterval = time.Second
	cfg.FourLetterWords = map[string]bool{"srvr": true, "ruok": true, "mntr": true, "stat": true, "conf": true}
	cfg.ClientPortAddress = "127.0.0.1"
	cfg.RequestHook = c.hooks.zooKeeper
	if n > 1 {
		cfg.MyID = uint64(s.id)
		for _, p := range c.zks {
			port := s.peerPort
			if p != s {
				_, port = splitPort(c.net.get(ZooKeeperServer(s.id), ZooKeeperServer(p.id)).addr())
			}
			cfg.Servers = append(cfg.Servers, quorum.ServerSpec{ID: uint64(p.id), Host: "127.0.0.1", PeerPort: port})
		}
	}
	for _, mod := range c.cfg.zkMods {
		mod(&cfg)
	}
	return cfg
}

// startZK starts server s on its data and points the links to it at its
// new client address.
func (c *Cluster) startZK(s *zkServer) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	cfg := s.cfg
	_, cfg.ClientPort = splitPort(l.Addr().String())
	var srv *quorum.Server
	for attempt := 1; ; attempt++ {
		// The peer port was free when picked; a restart rebinds it, and
		// something else may hold it for a moment.
		srv, err = quorum.StartWithListener(cfg, c.log.With("server", ZooKeeperServer(s.id).String()), l)
		if err == nil || s.peerPort == 0 || attempt == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		l.Close()
		return fmt.Errorf("zookeeper server %d: %w", s.id, err)
	}
	s.srv, s.addr = srv, l.Addr().String()
	for _, k := range c.clientLinks(ZooKeeperServer(s.id)) {
		k.setTarget(s.addr)
	}
	return nil
}

// stopZK shuts server s down: gracefully, or with hard (Kill) first
// silencing every link from it and closing every link to it, so that
// nothing it says while closing reaches anyone.
func (c *Cluster) stopZK(s *zkServer, hard bool) error {
	if s.srv == nil {
		return fmt.Errorf("zkafkatest: %s is not running", ZooKeeperServer(s.id))
	}
	m := ZooKeeperServer(s.id)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if hard {
		c.net.silence(m, true)
		defer c.net.silence(m, false)
		for _, k := range c.net.to(m) {
			if k.from.Kind == KindZooKeeper {
				k.closeConns()
			} else {
				k.setTarget("")
			}
		}
		cancel()
	}
	err := s.srv.Shutdown(ctx)
	s.srv, s.addr = nil, ""
	for _, k := range c.clientLinks(m) {
		k.setTarget("")
	}
	if hard {
		return nil // a cut-short shutdown reports the context's error
	}
	return err
}

// clientLinks are the links to ZooKeeper server m's client port: from
// the clients, the harness and the brokers (not its peers').
func (c *Cluster) clientLinks(m Member) []*link {
	return c.net.matching(func(from, to Member) bool { return to == m && from.Kind != KindZooKeeper })
}

func freePort() (int, error) { return freeport.Port() }

func splitPort(addr string) (string, int) {
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	return host, p
}

// offsetAddr is addr with i added to its port (port 0 stays 0).
func offsetAddr(addr string, i int) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", fmt.Errorf("zkafkatest: bad port in %q", addr)
	}
	if p != 0 {
		p += i
	}
	return net.JoinHostPort(host, strconv.Itoa(p)), nil
}
