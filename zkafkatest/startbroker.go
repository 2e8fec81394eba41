package zkafkatest

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/broker"
)

// StartBroker starts a broker of the caller's own configuration in the
// cluster: broker cfg.BrokerID, added if the cluster has no such broker,
// else started again (it must be stopped) with cfg in place of its last
// configuration. The harness serves each of cfg.Listeners (NAME://host:port,
// any security protocol) behind links and owns AdvertisedListeners (one
// per listener, each its link's address, which stays across restarts); it
// fills in what cfg leaves empty: LogDirs (DataDir()/kafka-N),
// ZooKeeperConnect (the cluster's ZooKeeper and Chroot), RequestHook (the
// interception rules), InterBrokerDial (the pair links) and LogFS (a
// faultfs, for Kill). It returns once the broker serves and, when its
// zookeeper.connect is the cluster's ZooKeeper, once it has registered
// under its chroot; log nil logs as the cluster does.
//
// The inter-broker listener (inter.broker.listener.name, else the one
// named after security.inter.broker.protocol, else the first) is reached
// through the brokers' links (Cut(Broker(m), Broker(n)), OtherBrokers);
// every other listener through a link from Clients, the first one's
// address being the broker's Addr and Seeds entry. A broker with one
// listener has it for both: its clients bootstrap through Clients, then
// follow the Metadata to the brokers' link.
func (c *Cluster) StartBroker(cfg broker.Config, log *slog.Logger) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.broker(cfg.BrokerID)
	if s != nil && s.b != nil {
		return fmt.Errorf("zkafkatest: %s is running", Broker(cfg.BrokerID))
	}
	if s == nil {
		var err error
		if s, err = c.addBroker(cfg, log, "127.0.0.1:0"); err != nil {
			return err
		}
	} else if err := c.configure(s, cfg, log, "127.0.0.1:0"); err != nil {
		return err
	}
	return c.startBroker(s)
}

// RunningBroker is broker id's *broker.Broker while it runs, else nil.
func (c *Cluster) RunningBroker(id int32) *broker.Broker {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.broker(id); s != nil {
		return s.b
	}
	return nil
}

// ListenerAddrs is where broker id's listeners are advertised, in the
// order of its Config.Listeners (host:port each); nil for no such broker.
func (c *Cluster) ListenerAddrs(id int32) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.broker(id)
	if s == nil {
		return nil
	}
	var out []string
	for _, a := range s.cfg.AdvertisedListeners {
		_, addr, _ := strings.Cut(a, "://")
		out = append(out, addr)
	}
	return out
}

// addBroker adds broker cfg.BrokerID with its links (the clients' first
// listener at clientAddr), not started.
func (c *Cluster) addBroker(cfg broker.Config, log *slog.Logger, clientAddr string) (*brokerServer, error) {
	if c.broker(cfg.BrokerID) != nil {
		return nil, fmt.Errorf("zkafkatest: %s exists", Broker(cfg.BrokerID))
	}
	s := &brokerServer{id: cfg.BrokerID}
	if err := c.configure(s, cfg, log, clientAddr); err != nil {
		return nil, err
	}
	c.brokers = append(c.brokers, s)
	return s, c.addPairLinks()
}

// configure makes cfg broker s's configuration, adding the links it has
// not got yet (see StartBroker).
func (c *Cluster) configure(s *brokerServer, cfg broker.Config, log *slog.Logger, clientAddr string) error {
	m := Broker(s.id)
	names, err := listenerNames(cfg.Listeners)
	if err != nil {
		return err
	}
	if s.listeners != nil && !slicesEqual(names, s.listeners) {
		return fmt.Errorf("zkafkatest: %s's listeners %v cannot change to %v", m, s.listeners, names)
	}
	ib := interBrokerName(cfg, names)
	if len(cfg.LogDirs) == 0 {
		cfg.LogDirs = []string{filepath.Join(c.dir, "kafka-"+strconv.Itoa(int(s.id)))}
	}
	if cfg.ZooKeeperConnect == "" {
		if cfg.ZooKeeperConnect, err = c.brokerZKConnect(m); err != nil {
			return err
		}
		s.ownZK = true
	}
	s.clientKeys = map[string]string{}
	var adv []string
	for _, name := range names {
		var k *link
		if name == ib {
			if k, err = c.ensureLink(OtherBrokers, m, "", "127.0.0.1:0"); err != nil {
				return err
			}
		}
		if name != ib || len(names) == 1 {
			key, addr := name, "127.0.0.1:0"
			if len(s.clientKeys) == 0 {
				key, addr = "", clientAddr
			}
			ck, err := c.ensureLink(Clients, m, key, addr)
			if err != nil {
				return err
			}
			s.clientKeys[name] = key
			if k == nil {
				k = ck
			}
		}
		adv = append(adv, name+"://"+k.addr())
	}
	cfg.AdvertisedListeners = adv
	if cfg.RequestHook == nil {
		cfg.RequestHook = c.hooks.kafka
	}
	if cfg.InterBrokerDial == nil {
		cfg.InterBrokerDial = c.interBrokerDial(s.id)
	}
	if log == nil {
		log = c.log.With("server", m.String())
	}
	s.cfg, s.log, s.listeners, s.interBroker = cfg, log, names, ib
	return nil
}

// ensureLink returns the link from → to of listener, adding it at addr
// if there is none.
func (c *Cluster) ensureLink(from, to Member, listener, addr string) (*link, error) {
	if k := c.net.getListener(from, to, listener); k != nil {
		return k, nil
	}
	return c.net.addListener(from, to, listener, addr)
}

// brokerZKConnect is broker m's zookeeper.connect: its own links to every
// ZooKeeper server (or the ExternalZooKeeper), then the Chroot.
func (c *Cluster) brokerZKConnect(m Member) (string, error) {
	if c.cfg.externalZK != "" {
		return c.cfg.externalZK + c.cfg.chroot, nil
	}
	var addrs []string
	for _, z := range c.zks {
		k, err := c.ensureLink(m, ZooKeeperServer(z.id), "", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		k.setTarget(z.addr)
		addrs = append(addrs, k.addr())
	}
	return strings.Join(addrs, ",") + c.cfg.chroot, nil
}

// listenerLinks are the links to broker s's listener name.
func (c *Cluster) listenerLinks(s *brokerServer, name string) []*link {
	m := Broker(s.id)
	var out []*link
	if name == s.interBroker {
		out = c.net.brokerLinks(m)
	}
	if key, ok := s.clientKeys[name]; ok {
		out = append(out, c.net.getListener(Clients, m, key))
	}
	return out
}

// registrationPath is where broker s registers (/brokers/ids/N under the
// chroot of its zookeeper.connect), and whether the harness's session
// sees it: the broker uses the cluster's ZooKeeper.
func (c *Cluster) registrationPath(s *brokerServer) (string, bool) {
	hosts, chroot, _ := strings.Cut(s.cfg.ZooKeeperConnect, "/")
	if chroot != "" {
		chroot = "/" + chroot
	}
	path := chroot + "/brokers/ids/" + strconv.Itoa(int(s.id))
	return path, s.ownZK || hosts == c.ZooKeeper()
}

// zpath is the harness's path of the brokers' znode p: under the Chroot.
func (c *Cluster) zpath(p string) string { return c.cfg.chroot + p }

// listenerNames are the names of listeners (NAME://host:port), upper
// case as Kafka reads them.
func listenerNames(listeners []string) ([]string, error) {
	if len(listeners) == 0 {
		return nil, fmt.Errorf("zkafkatest: a broker with no listener")
	}
	var out []string
	for _, l := range listeners {
		name, _, ok := strings.Cut(l, "://")
		if !ok || name == "" {
			return nil, fmt.Errorf("zkafkatest: listener %q is not NAME://host:port", l)
		}
		out = append(out, strings.ToUpper(name))
	}
	return out, nil
}

// interBrokerName is the listener of names the other brokers reach cfg's
// broker on, as the broker picks it (broker.Config's interBrokerListener).
func interBrokerName(cfg broker.Config, names []string) string {
	want := cfg.InterBroker.ListenerName
	if want == "" {
		want = cfg.InterBroker.SecurityProtocol
	}
	for _, n := range names {
		if n == strings.ToUpper(want) {
			return n
		}
	}
	return names[0]
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
