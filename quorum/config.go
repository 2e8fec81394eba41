package quorum

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config is a ZooKeeper server's configuration, read from a standard zoo.cfg.
type Config struct {
	TickTime          time.Duration // tickTime, the basic time unit (default 2 s)
	InitLimit         int           // initLimit in ticks
	SyncLimit         int           // syncLimit in ticks
	DataDir           string        // dataDir: snapshots, myid
	DataLogDir        string        // dataLogDir: the raft log (default DataDir)
	ClientPort        int           // clientPort (default 2181)
	ClientPortAddress string        // clientPortAddress (default all addresses)
	MaxClientCnxns    int           // maxClientCnxns per client IP (0 = unlimited; default 60)
	MinSessionTimeout time.Duration // minSessionTimeout (default 2×tickTime)
	MaxSessionTimeout time.Duration // maxSessionTimeout (default 20×tickTime)
	SnapRetainCount   int           // autopurge.snapRetainCount (default 3, minimum 3)
	PurgeInterval     int           // autopurge.purgeInterval: accepted; old snapshots are purged at every snapshot instead
	FourLetterWords   map[string]bool
	JuteMaxBuffer     int    // jute.maxbuffer (default 0xfffff)
	PeerMaxSnapshot   int    // zkafka.peer.maxSnapshotBytes: the largest snapshot sent to or taken from a peer (0: 1 GiB)
	ExtendedTypes     bool   // extendedTypesEnabled: TTL nodes
	SnapCount         uint64 // snapCount: txns between snapshots (default 100000)
	ContainerInterval time.Duration
	SuperDigest       string // zookeeper.DigestAuthenticationProvider.superDigest: "super:<digest>"
	MyID              uint64 // from dataDir/myid (0 when standalone without one)
	Servers           []ServerSpec
}

// ServerSpec is one server.N line of zoo.cfg.
type ServerSpec struct {
	ID         uint64
	Host       string
	PeerPort   int
	ElectPort  int
	Observer   bool
	ClientHost string
	ClientPort int
}

// DefaultConfig returns the defaults of Apache ZooKeeper 3.8, with the data
// under dataDir and clients on 127.0.0.1:2181.
func DefaultConfig(dataDir string) Config {
	c := Config{
		TickTime:          2 * time.Second,
		InitLimit:         10,
		SyncLimit:         5,
		DataDir:           dataDir,
		ClientPort:        2181,
		ClientPortAddress: "127.0.0.1",
		MaxClientCnxns:    60,
		SnapRetainCount:   3,
		JuteMaxBuffer:     0xfffff,
		SnapCount:         100000,
		ContainerInterval: 60 * time.Second,
		FourLetterWords:   map[string]bool{"srvr": true},
	}
	c.fillDerived()
	return c
}

func (c *Config) fillDerived() {
	if c.DataLogDir == "" {
		c.DataLogDir = c.DataDir
	}
	if c.MinSessionTimeout == 0 {
		c.MinSessionTimeout = 2 * c.TickTime
	}
	if c.MaxSessionTimeout == 0 {
		c.MaxSessionTimeout = 20 * c.TickTime
	}
	if c.SnapRetainCount < 3 {
		c.SnapRetainCount = 3
	}
}

// ClientAddr is the address the client listener binds.
// In an ensemble, the client address of this server's server.N line, when
// it has one, wins over clientPort and clientPortAddress.
func (c *Config) ClientAddr() string {
	host, port := c.ClientPortAddress, c.ClientPort
	if sp := c.selfSpec(); sp != nil && sp.ClientPort > 0 {
		port = sp.ClientPort
		if sp.ClientHost != "" {
			host = sp.ClientHost
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// LoadConfig reads a zoo.cfg and the myid file in its dataDir. Unknown keys
// are logged as warnings, not failures.
func LoadConfig(path string, log *slog.Logger) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, err
	}
	defer f.Close()
	c, err := ParseConfig(f, log)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if c.DataDir == "" {
		return Config{}, fmt.Errorf("%s: dataDir is not set", path)
	}
	if b, err := os.ReadFile(filepath.Join(c.DataDir, "myid")); err == nil {
		id, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return Config{}, fmt.Errorf("%s: bad myid: %w", filepath.Join(c.DataDir, "myid"), err)
		}
		c.MyID = id
	} else if len(c.Servers) > 0 {
		return Config{}, fmt.Errorf("%s: an ensemble needs %s", path, filepath.Join(c.DataDir, "myid"))
	}
	return c, nil
}

// ParseConfig parses zoo.cfg text (Java properties: key=value, # comments).
func ParseConfig(r io.Reader, log *slog.Logger) (Config, error) {
	c := DefaultConfig("")
	c.ClientPortAddress = ""
	c.MinSessionTimeout, c.MaxSessionTimeout = 0, 0
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || text[0] == '!' {
			continue
		}
		key, value, ok := cutProperty(text)
		if !ok {
			return Config{}, fmt.Errorf("line %d: not key=value: %q", line, text)
		}
		if err := c.set(key, value, log); err != nil {
			return Config{}, fmt.Errorf("line %d: %s: %w", line, key, err)
		}
	}
	if err := sc.Err(); err != nil {
		return Config{}, err
	}
	c.fillDerived()
	return c, nil
}

func cutProperty(text string) (key, value string, ok bool) {
	i := strings.IndexAny(text, "=:")
	if i < 0 {
		return "", "", false
	}
	return strings.TrimSpace(text[:i]), strings.TrimSpace(text[i+1:]), true
}

func (c *Config) set(key, value string, log *slog.Logger) error {
	var err error
	atoi := func() int {
		var n int
		n, err = strconv.Atoi(value)
		return n
	}
	switch key {
	case "tickTime":
		c.TickTime = time.Duration(atoi()) * time.Millisecond
	case "initLimit":
		c.InitLimit = atoi()
	case "syncLimit":
		c.SyncLimit = atoi()
	case "dataDir":
		c.DataDir = value
	case "dataLogDir":
		c.DataLogDir = value
	case "clientPort":
		c.ClientPort = atoi()
	case "clientPortAddress":
		c.ClientPortAddress = value
	case "maxClientCnxns":
		c.MaxClientCnxns = atoi()
	case "minSessionTimeout":
		c.MinSessionTimeout = time.Duration(atoi()) * time.Millisecond
	case "maxSessionTimeout":
		c.MaxSessionTimeout = time.Duration(atoi()) * time.Millisecond
	case "autopurge.snapRetainCount":
		c.SnapRetainCount = atoi()
	case "autopurge.purgeInterval":
		c.PurgeInterval = atoi()
	case "4lw.commands.whitelist":
		c.FourLetterWords = parseWhitelist(value)
	case "jute.maxbuffer":
		c.JuteMaxBuffer, err = parseJuteMaxBuffer(value)
	case PeerMaxSnapshotKey:
		c.PeerMaxSnapshot, err = parsePeerMaxSnapshot(value)
	case "extendedTypesEnabled", "zookeeper.extendedTypesEnabled":
		c.ExtendedTypes, err = strconv.ParseBool(value)
	case "snapCount":
		var n uint64
		n, err = strconv.ParseUint(value, 10, 64)
		c.SnapCount = n
	case "znode.container.checkIntervalMs":
		c.ContainerInterval = time.Duration(atoi()) * time.Millisecond
	case "zookeeper.DigestAuthenticationProvider.superDigest", "superDigest":
		c.SuperDigest = value
	case "standaloneEnabled", "reconfigEnabled", "admin.enableServer", "admin.serverPort",
		"metricsProvider.className", "preAllocSize", "globalOutstandingLimit":
		// Accepted and ignored: they change nothing zkafka does.
	default:
		if strings.HasPrefix(key, "server.") {
			return c.addServer(key, value)
		}
		if log != nil {
			log.Warn("zoo.cfg: unknown key ignored", "key", key)
		}
	}
	return err
}

func parseWhitelist(value string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Split(value, ",") {
		w = strings.TrimSpace(w)
		if w == "*" {
			for _, all := range fourLetterWords {
				m[all] = true
			}
			continue
		}
		if w != "" {
			m[w] = true
		}
	}
	return m
}

func parseJuteMaxBuffer(value string) (int, error) {
	n, err := strconv.ParseInt(value, 0, 32)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad jute.maxbuffer %q", value)
	}
	return int(n), nil
}

// addServer parses server.N=host:peerPort:electionPort[:participant|:observer][;[clientHost:]clientPort].
func (c *Config) addServer(key, value string) error {
	id, err := strconv.ParseUint(strings.TrimPrefix(key, "server."), 10, 64)
	if err != nil {
		return fmt.Errorf("bad server id")
	}
	s := ServerSpec{ID: id}
	addr, client, hasClient := strings.Cut(value, ";")
	parts := strings.Split(addr, ":")
	if len(parts) < 3 || len(parts) > 4 {
		return fmt.Errorf("want host:peerPort:electionPort[:role], got %q", addr)
	}
	s.Host = parts[0]
	if s.PeerPort, err = strconv.Atoi(parts[1]); err != nil {
		return fmt.Errorf("bad peer port %q", parts[1])
	}
	if s.ElectPort, err = strconv.Atoi(parts[2]); err != nil {
		return fmt.Errorf("bad election port %q", parts[2])
	}
	if len(parts) == 4 {
		switch parts[3] {
		case "observer":
			s.Observer = true
		case "participant":
		default:
			return fmt.Errorf("bad role %q", parts[3])
		}
	}
	if hasClient {
		host, port, found := strings.Cut(client, ":")
		if !found {
			host, port = "", client
		}
		s.ClientHost = host
		if s.ClientPort, err = strconv.Atoi(port); err != nil {
			return fmt.Errorf("bad client port %q", port)
		}
	}
	c.Servers = append(c.Servers, s)
	return nil
}

// DynamicConfigText is what an ensemble member shows in /zookeeper/config,
// in ZooKeeper 3.8's format: one server.N line per member (role and client
// address included) and the configuration version.
func (c *Config) DynamicConfigText() string {
	var b strings.Builder
	servers := append([]ServerSpec(nil), c.Servers...)
	sort.Slice(servers, func(i, j int) bool { return servers[i].ID < servers[j].ID })
	for _, sv := range servers {
		role := "participant"
		if sv.Observer {
			role = "observer"
		}
		host, port := sv.ClientHost, sv.ClientPort
		if host == "" {
			host = c.ClientPortAddress
		}
		if host == "" {
			host = "0.0.0.0"
		}
		if port == 0 {
			port = c.ClientPort
		}
		fmt.Fprintf(&b, "server.%d=%s:%d:%d:%s;%s:%d\n", sv.ID, sv.Host, sv.PeerPort, sv.ElectPort, role, host, port)
	}
	b.WriteString("version=0")
	return b.String()
}
