package kcluster

import (
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
	"github.com/zkafka/zkafka/internal/faultproxy"
)

// Options shape a cluster; the zero value is the fault tests' cluster.
type Options struct {
	Brokers        int               // default 3
	SessionTimeout time.Duration     // zookeeper.session.timeout.ms, default 4 s
	ReplicaLag     time.Duration     // replica.lag.time.max.ms, default 3 s
	MinISR         int               // min.insync.replicas, default 2
	RF             int               // default.replication.factor, default 3
	Props          map[string]string // more server.properties lines (override the above)
	Bin            string            // zkafka binary; default $ZKAFKA_BIN, else bin/zkafka
	Dir            string            // default a new temporary directory
	LogLevel       string            // the brokers' -log-level, default info
	// ZooKeeper is an ensemble to use (host:port,...) instead of starting
	// `zkafka zookeeper`, for example Apache ZooKeeper; default
	// $ZKAFKA_TEST_ZK. The cluster then lives under its own chroot.
	ZooKeeper string
}

func (o *Options) defaults() {
	if o.Brokers == 0 {
		o.Brokers = 3
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = 4 * time.Second
	}
	if o.ReplicaLag == 0 {
		o.ReplicaLag = 3 * time.Second
	}
	if o.MinISR == 0 {
		o.MinISR = 2
	}
	if o.RF == 0 {
		o.RF = 3
	}
	if o.Bin == "" {
		o.Bin = os.Getenv("ZKAFKA_BIN")
	}
	if o.Bin == "" {
		o.Bin = "bin/zkafka"
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if o.ZooKeeper == "" {
		o.ZooKeeper = os.Getenv("ZKAFKA_TEST_ZK")
	}
}

// Cluster is one ZooKeeper and Brokers (Brokers[i] has broker.id i+1),
// each a process.
type Cluster struct {
	T       T
	Opts    Options
	ZKAddr  string // the ZooKeeper connect string, without the chroot
	Chroot  string // "" with the harness's own ZooKeeper, else "/kcluster-<random>"
	Brokers []*Broker
	zk      *benchkit.Proc
	zkc     *zk.Conn
	dir     string
}

// Broker is one broker process and the proxy in front of its
// inter-broker listener.
type Broker struct {
	ID       int32
	Addr     string            // PLAINTEXT, for clients
	ReplAddr string            // the REPLICATION listener itself
	Proxy    *faultproxy.Proxy // advertised as REPLICATION; forwards to ReplAddr
	Dir      string            // log.dirs
	Props    string            // server.properties
	proc     *benchkit.Proc
	starts   int
	paused   bool
}

// Start starts ZooKeeper and the brokers, waits until every broker is
// registered and a controller is elected, and kills them all at cleanup.
func Start(t T, o Options) *Cluster {
	t.Helper()
	o.defaults()
	c := &Cluster{T: t, Opts: o, dir: o.Dir}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "zkafka-kcluster")
		if err != nil {
			t.Fatalf("%v", err)
		}
		c.dir = d
	}
	if abs, err := filepath.Abs(c.dir); err == nil {
		c.dir = abs // the processes run in it: their paths must not be relative to it
	}
	t.Cleanup(c.stopAll)
	if o.ZooKeeper != "" {
		c.ZKAddr, c.Chroot = o.ZooKeeper, "/kcluster-"+strconv.FormatInt(time.Now().UnixNano(), 36)
		c.connectZK()
	} else {
		c.startZooKeeper()
	}
	for id := int32(1); id <= int32(o.Brokers); id++ {
		c.Brokers = append(c.Brokers, c.newBroker(id))
	}
	for _, b := range c.Brokers {
		c.startBroker(b)
	}
	c.WaitFor("every broker registered and a controller", 30*time.Second, func() bool {
		return len(c.Registered()) == o.Brokers && c.Controller() > 0
	})
	return c
}

func (c *Cluster) startZooKeeper() {
	port := c.freePort()
	c.ZKAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	data := filepath.Join(c.dir, "zookeeper")
	os.MkdirAll(data, 0o755)
	cfg := filepath.Join(c.dir, "zoo.cfg")
	// tickTime 500: sessions of 1..10 s, so the brokers' 4 s is granted.
	body := fmt.Sprintf("tickTime=500\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n", data, port)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		c.T.Fatalf("%v", err)
	}
	var err error
	c.zk, err = benchkit.Start("zkafka zookeeper", filepath.Join(c.dir, "zookeeper.log"), c.dir, c.Opts.Bin, "zookeeper", "-log-level", "warn", cfg)
	if err != nil {
		c.T.Fatalf("start zookeeper: %v", err)
	}
	if err := c.zk.WaitReady(30*time.Second, benchkit.DialReady(c.ZKAddr)); err != nil {
		c.T.Fatalf("%v", err)
	}
	c.connectZK()
}

func (c *Cluster) connectZK() {
	var err error
	c.zkc, _, err = zk.Connect(strings.Split(c.ZKAddr, ","), 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(discard{}))
	if err != nil {
		c.T.Fatalf("zk.Connect: %v", err)
	}
}

// get and children read the cluster's znode p (under its chroot).
func (c *Cluster) get(p string) ([]byte, *zk.Stat, error) { return c.zkc.Get(c.Chroot + p) }

func (c *Cluster) children(p string) ([]string, *zk.Stat, error) {
	return c.zkc.Children(c.Chroot + p)
}

type discard struct{}

func (discard) Printf(string, ...any) {}

func (c *Cluster) freePort() int {
	p, err := benchkit.FreePort()
	if err != nil {
		c.T.Fatalf("%v", err)
	}
	return p
}

// newBroker picks the broker's ports, starts its proxy and writes its
// server.properties.
func (c *Cluster) newBroker(id int32) *Broker {
	b := &Broker{ID: id, Dir: filepath.Join(c.dir, fmt.Sprintf("broker-%d", id))}
	b.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(c.freePort()))
	b.ReplAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(c.freePort()))
	var err error
	if b.Proxy, err = faultproxy.NewKafka(b.ReplAddr); err != nil {
		c.T.Fatalf("proxy: %v", err)
	}
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		c.T.Fatalf("%v", err)
	}
	props := map[string]string{
		"broker.id":                        strconv.Itoa(int(id)),
		"listeners":                        "PLAINTEXT://" + b.Addr + ",REPLICATION://" + b.ReplAddr,
		"advertised.listeners":             "PLAINTEXT://" + b.Addr + ",REPLICATION://" + b.Proxy.Addr(),
		"listener.security.protocol.map":   "PLAINTEXT:PLAINTEXT,REPLICATION:PLAINTEXT",
		"inter.broker.listener.name":       "REPLICATION",
		"log.dirs":                         filepath.Join(b.Dir, "logs"),
		"zookeeper.connect":                c.ZKAddr + c.Chroot,
		"zookeeper.session.timeout.ms":     ms(c.Opts.SessionTimeout),
		"replica.lag.time.max.ms":          ms(c.Opts.ReplicaLag),
		"min.insync.replicas":              strconv.Itoa(c.Opts.MinISR),
		"default.replication.factor":       strconv.Itoa(c.Opts.RF),
		"offsets.topic.replication.factor": strconv.Itoa(c.Opts.RF),
		"num.partitions":                   "6",
		"auto.create.topics.enable":        "false",
	}
	maps.Copy(props, c.Opts.Props)
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(props)) {
		lines = append(lines, k+"="+props[k])
	}
	b.Props = filepath.Join(b.Dir, "server.properties")
	if err := os.WriteFile(b.Props, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		c.T.Fatalf("%v", err)
	}
	return b
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// Broker returns the broker with broker.id id.
func (c *Cluster) Broker(id int32) *Broker { return c.Brokers[id-1] }

// Seeds is every broker's client address, for kgo.SeedBrokers.
func (c *Cluster) Seeds() []string {
	var out []string
	for _, b := range c.Brokers {
		out = append(out, b.Addr)
	}
	return out
}

// Dir is the cluster's directory (configs, data and logs).
func (c *Cluster) Dir() string { return c.dir }

// stopAll kills every process (a paused one too: SIGKILL needs no SIGCONT)
// and the proxies, then removes the directory unless Options.Dir was given.
func (c *Cluster) stopAll() {
	if c.zkc != nil {
		c.zkc.Close()
	}
	for _, b := range c.Brokers {
		if b.proc != nil {
			b.proc.Signal(9)
			b.proc.Wait(10 * time.Second)
		}
		b.Proxy.Close()
	}
	if c.zk != nil {
		c.zk.Stop(5 * time.Second)
	}
	if c.Opts.Dir == "" && os.Getenv("ZKAFKA_KEEP_CLUSTER") == "" {
		os.RemoveAll(c.dir)
	}
}
