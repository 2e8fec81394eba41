package kafkatool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// defaultBootstrap is the broker that `zkafka run` starts.
const defaultBootstrap = "127.0.0.1:9092"

// connFlags are the flags every tool shares: where the cluster is and how
// to print. They are persistent flags of each top-level command.
type connFlags struct {
	bootstrap string        // --bootstrap-server
	zookeeper string        // --zookeeper
	zkSession time.Duration // --zookeeper-session-timeout
	timeout   time.Duration // --timeout, for one admin command
	output    string        // -o table|json
}

func (f *connFlags) register(c *cobra.Command) {
	p := c.PersistentFlags()
	p.StringVar(&f.bootstrap, "bootstrap-server", "", "brokers to start from, HOST:PORT[,HOST:PORT] (default "+defaultBootstrap+" unless --zookeeper)")
	p.StringVar(&f.zookeeper, "zookeeper", "", "find the brokers in ZooKeeper: HOST:PORT[,HOST:PORT][/chroot]")
	p.DurationVar(&f.zkSession, "zookeeper-session-timeout", 6*time.Second, "ZooKeeper session timeout")
	p.DurationVar(&f.timeout, "timeout", 30*time.Second, "give up on the cluster after this long")
	p.StringVarP(&f.output, "output", "o", "table", "output format: table or json")
}

// check validates the output format; commands call it first.
func (f *connFlags) check() error {
	if f.output != "table" && f.output != "json" {
		return fmt.Errorf("-o %q: want table or json", f.output)
	}
	return nil
}

func (f *connFlags) json() bool { return f.output == "json" }

// zkClient is a ZooKeeper session with the chroot of --zookeeper applied
// by path (go-zookeeper has no chroot of its own).
type zkClient struct {
	*zk.Conn
	chroot  string // "" or "/kafka"
	servers []string
	// sessions gets a signal each time a session is established after the
	// first (a reconnect after expiry): ephemerals may have to be redone.
	sessions chan struct{}
}

// path returns the session's path of the cluster's znode p ("/brokers/ids").
func (z *zkClient) path(p string) string {
	if z.chroot == "" {
		return p
	}
	if p == "/" {
		return z.chroot
	}
	return z.chroot + p
}

// splitZooKeeper splits HOST:PORT[,HOST:PORT][/chroot].
func splitZooKeeper(s string) (servers []string, chroot string, err error) {
	hosts := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, chroot = s[:i], strings.TrimRight(s[i:], "/")
	}
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, "2181")
		}
		servers = append(servers, h)
	}
	if len(servers) == 0 {
		return nil, "", fmt.Errorf("--zookeeper %q: no HOST:PORT", s)
	}
	return servers, chroot, nil
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// connectZooKeeper opens a session and waits (up to the context) until it
// is established, so that a wrong address fails with one clear line
// instead of retrying forever.
func connectZooKeeper(ctx context.Context, spec string, session time.Duration) (*zkClient, error) {
	servers, chroot, err := splitZooKeeper(spec)
	if err != nil {
		return nil, err
	}
	c, events, err := zk.Connect(servers, session, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
	if err != nil {
		return nil, fmt.Errorf("zookeeper %s: %w", spec, err)
	}
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				z := &zkClient{Conn: c, chroot: chroot, servers: servers, sessions: make(chan struct{}, 1)}
				go z.follow(events)
				return z, nil
			}
		case <-ctx.Done():
			c.Close()
			return nil, fmt.Errorf("zookeeper %s: no session: %w", spec, context.Cause(ctx))
		}
	}
}

// follow reads the session's events, signalling new sessions.
func (z *zkClient) follow(ch <-chan zk.Event) {
	for ev := range ch {
		if ev.State == zk.StateHasSession {
			select {
			case z.sessions <- struct{}{}:
			default:
			}
		}
	}
}

// errNoBrokers: ZooKeeper holds no broker registration.
var errNoBrokers = errors.New("no brokers registered")

// brokerZNode is the part of /brokers/ids/{id} the tools read.
type brokerZNode struct {
	Host      string   `json:"host"`
	Port      int      `json:"port"`
	Endpoints []string `json:"endpoints"`
}

// brokerAddr returns host:port from a registration: its first endpoint
// (PLAINTEXT://host:port), else host and port.
func (b brokerZNode) addr() string {
	for _, e := range b.Endpoints {
		if i := strings.Index(e, "://"); i >= 0 {
			return e[i+3:]
		}
	}
	if b.Host == "" {
		return ""
	}
	return net.JoinHostPort(b.Host, strconv.Itoa(b.Port))
}

// zkBrokers reads /brokers/ids, leaving a watch on its children.
func zkBrokers(z *zkClient) (map[int32]string, <-chan zk.Event, error) {
	ids, _, ev, err := z.ChildrenW(z.path("/brokers/ids"))
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, fmt.Errorf("%w under %s", errNoBrokers, z.path("/brokers/ids"))
	} else if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", z.path("/brokers/ids"), err)
	}
	out := map[int32]string{}
	for _, id := range ids {
		n, err := strconv.ParseInt(id, 10, 32)
		if err != nil {
			continue
		}
		data, _, err := z.Get(z.path("/brokers/ids/" + id))
		if err != nil {
			continue // gone meanwhile; the watch tells
		}
		var b brokerZNode
		if json.Unmarshal(data, &b) == nil && b.addr() != "" {
			out[int32(n)] = b.addr()
		}
	}
	return out, ev, nil
}

func addrList(m map[int32]string) []string {
	var out []string
	for _, a := range m {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// followBrokers keeps the client's seed brokers equal to the registered
// brokers until ctx ends: every change of /brokers/ids re-reads it.
func followBrokers(ctx context.Context, z *zkClient, cl *kgo.Client, ev <-chan zk.Event) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ev:
			if !ok {
				return
			}
		}
		for {
			m, next, err := zkBrokers(z)
			if err == nil {
				if addrs := addrList(m); len(addrs) > 0 {
					cl.UpdateSeedBrokers(addrs...)
				}
				ev = next
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
}

// cluster is an open connection to the Kafka cluster (and to ZooKeeper,
// when --zookeeper named it).
type cluster struct {
	kc   *kgo.Client
	adm  *kadm.Client
	zk   *zkClient // nil without --zookeeper
	stop context.CancelFunc
}

func (c *cluster) Close() {
	c.stop()
	c.kc.Close()
	if c.zk != nil {
		c.zk.Close()
	}
}

// open connects as the flags say: the bootstrap list, or the brokers
// registered in ZooKeeper (followed while the cluster is open).
func (f *connFlags) open(ctx context.Context, opts ...kgo.Opt) (*cluster, error) {
	c := &cluster{}
	var seeds []string
	var ev <-chan zk.Event
	if f.zookeeper != "" {
		zctx, cancel := context.WithTimeout(ctx, f.timeout)
		z, err := connectZooKeeper(zctx, f.zookeeper, f.zkSession)
		cancel()
		if err != nil {
			return nil, err
		}
		c.zk = z
		if f.bootstrap == "" {
			m, e, err := zkBrokers(z)
			if err != nil {
				z.Close()
				return nil, err
			}
			if len(m) == 0 {
				z.Close()
				return nil, fmt.Errorf("%w under %s", errNoBrokers, z.path("/brokers/ids"))
			}
			seeds, ev = addrList(m), e
		}
	}
	if seeds == nil {
		b := f.bootstrap
		if b == "" {
			b = defaultBootstrap
		}
		seeds = strings.Split(b, ",")
	}
	kc, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
	if err != nil {
		if c.zk != nil {
			c.zk.Close()
		}
		return nil, err
	}
	c.kc, c.adm = kc, kadm.NewClient(kc)
	fctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	if ev != nil {
		go followBrokers(fctx, c.zk, kc, ev)
	}
	return c, nil
}

// requireZooKeeper opens the --zookeeper session alone (bench zk).
func (f *connFlags) requireZooKeeper(ctx context.Context) (*zkClient, error) {
	if f.zookeeper == "" {
		return nil, errors.New("--zookeeper HOST:PORT is required")
	}
	zctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	return connectZooKeeper(zctx, f.zookeeper, f.zkSession)
}
