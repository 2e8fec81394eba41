package quorum

import (
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

	"github.com/zkafka/zkafka/internal/properties"
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
	EnforceQuota      bool   // zookeeper.enforceQuota: hard quotas refuse writes (QuotaExceeded)
	SnapCount         uint64 // snapCount: txns between snapshots (default 100000)
	ContainerInterval time.Duration
	SuperDigest       string // zookeeper.DigestAuthenticationProvider.superDigest: "super:<digest>"
	MyID              uint64 // from dataDir/myid (0 when standalone without one)
	// DynamicConfigFile is dynamicConfigFile: the file the server.N lines
	// came from ("" when they are in zoo.cfg).
	DynamicConfigFile string
	// ConfigVersion is the version of the server.N lines: the hex suffix of
	// DynamicConfigFile's name, 0 for lines in zoo.cfg.
	ConfigVersion   uint64
	ReconfigEnabled bool // reconfigEnabled
	Servers         []ServerSpec
	Metrics         MetricsConfig // metricsProvider.*: the Prometheus endpoint (metrics_config.go)
	Admin           AdminConfig   // admin.*: the AdminServer (metrics_config.go)
	// SecureClientPort is secureClientPort: clients over TLS (0: none);
	// SecureClientPortAddress its host ("": clientPortAddress's).
	SecureClientPort        int
	SecureClientPortAddress string
	TLS                     TLSConfig // ssl.*: the secure client port's TLS (config_tls.go)
	// X509SuperUser is X509AuthenticationProvider.superUser: the subject
	// DN of a client certificate that makes its connections super.
	X509SuperUser string
	// SSLQuorum is sslQuorum: the peer transport runs over TLS with
	// QuorumTLS (ssl.quorum.*); QuorumPortUnification (portUnification)
	// lets the peer port take plain peers too, for a rolling change.
	// QuorumReloadCertFiles (sslQuorumReloadCertFiles) reads changed
	// ssl.quorum.* store files again for new peer connections.
	SSLQuorum             bool
	QuorumTLS             TLSConfig
	QuorumPortUnification bool
	QuorumReloadCertFiles bool
	// SASL is client SASL and the enforcement of authentication
	// (config_sasl.go).
	SASL SASLConfig
	// RequestHook, if set, sees every request of an established session
	// before it is executed and may delay it, fail it or drop its
	// connection (request_hook.go); no zoo.cfg key sets it. Test harnesses
	// use it.
	RequestHook RequestHook

	// initialText is the zoo.cfg as read (the AdminServer's
	// initial_configuration).
	initialText string

	// clientPortGiven: zoo.cfg sets clientPort, which must then agree with
	// this server's server.N client port (checked once myid is known).
	clientPortGiven bool
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
		Metrics:           defaultMetricsConfig(),
		Admin:             defaultAdminConfig(),
		TLS:               defaultTLSConfig(),
		QuorumTLS:         defaultTLSConfig(),
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

// LoadConfig reads a zoo.cfg and the myid file in its dataDir. A value
// that is not allowed is an error, a *properties.Error whose text is one
// line naming the file, the key, the value and what is allowed; unknown
// keys are logged as warnings.
func LoadConfig(path string, log *slog.Logger) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, err
	}
	defer f.Close()
	c, err := ParseConfig(f, log)
	if err != nil {
		return Config{}, properties.WithFile(err, path)
	}
	if c.DataDir == "" {
		return Config{}, &properties.Error{File: path, Allowed: "dataDir is not set; it must name the directory of the snapshots (and of myid)"}
	}
	if err := c.loadMyID(path); err != nil {
		return Config{}, err
	}
	if err := c.SASL.loadJAAS(os.Getenv, log); err != nil {
		return Config{}, err
	}
	return c, nil
}

// loadMyID reads dataDir/myid. A standalone server needs none; an
// ensemble member needs one that holds one of the server.N ids.
func (c *Config) loadMyID(cfgPath string) error {
	path := filepath.Join(c.DataDir, "myid")
	b, err := os.ReadFile(path)
	if err != nil {
		if len(c.Servers) == 0 {
			return nil
		}
		return &properties.Error{File: cfgPath, Allowed: fmt.Sprintf(
			"the ensemble (server.N lines) needs %s, a file that holds this server's id (%v)", path, err)}
	}
	text := strings.TrimSpace(string(b))
	lo, hi := uint64(0), uint64(maxServerID)
	if len(c.Servers) > 0 {
		lo = 1
	}
	if c.ExtendedTypes {
		// ZooKeeper's EphemeralType: a TTL node's owner holds the server
		// id in a byte whose 0xff means TTL.
		hi = maxServerID - 1
	}
	id, err := strconv.ParseUint(text, 10, 64)
	if err != nil || id < lo || id > hi {
		why := ""
		if c.ExtendedTypes {
			why = " (extendedTypesEnabled: TTL nodes allow ids up to 254)"
		}
		return &properties.Error{File: path, Value: text, Allowed: fmt.Sprintf("must be this server's id, an integer from %d to %d%s", lo, hi, why)}
	}
	c.MyID = id
	if len(c.Servers) > 0 && c.selfSpec() == nil {
		ids := make([]string, len(c.Servers))
		for i, sv := range c.Servers {
			ids[i] = strconv.FormatUint(sv.ID, 10)
		}
		return &properties.Error{File: path, Value: text, Allowed: fmt.Sprintf(
			"is not the id of a server.N line (%s) of %s", strings.Join(ids, ", "), cfgPath)}
	}
	return c.checkClientPort(cfgPath)
}

// checkClientPort rejects a clientPort (and clientPortAddress) that
// contradicts the client address of this server's server.N line, as
// QuorumPeerConfig.setupClientPort does: the ports must be the same, and so
// must the hosts when clientPortAddress is a specific address (the host
// of a line without one is 0.0.0.0). Host names are not resolved, so only
// IP addresses are compared.
func (c *Config) checkClientPort(cfgPath string) error {
	self := c.selfSpec()
	if self == nil || self.ClientPort == 0 || !c.clientPortGiven {
		return nil
	}
	lineHost := self.ClientHost
	if lineHost == "" {
		lineHost = "0.0.0.0"
	}
	ip, lineIP := net.ParseIP(c.ClientPortAddress), net.ParseIP(lineHost)
	hostsDiffer := ip != nil && !ip.IsUnspecified() && lineIP != nil && !ip.Equal(lineIP)
	if self.ClientPort == c.ClientPort && !hostsDiffer {
		return nil
	}
	return &properties.Error{File: cfgPath, Key: "clientPort", Value: strconv.Itoa(c.ClientPort), Allowed: fmt.Sprintf(
		"clientPort and clientPortAddress (%s) differ from the client address of this server's server.%d line (%s)",
		net.JoinHostPort(c.ClientPortAddress, strconv.Itoa(c.ClientPort)), self.ID, net.JoinHostPort(lineHost, strconv.Itoa(self.ClientPort)))}
}

// ParseConfig parses zoo.cfg text (a Java properties file, see package
// internal/properties) and checks every value as Apache ZooKeeper 3.8's
// QuorumPeerConfig does, and more strictly where a value ZooKeeper accepts
// would crash or silently disable this server (config_keys.go lists the
// rules). Unknown keys are logged as warnings; keys ZooKeeper knows and
// zkafka has no use for are logged at debug level.
func ParseConfig(r io.Reader, log *slog.Logger) (Config, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var text strings.Builder
	props, err := properties.Load(io.TeeReader(r, &text))
	if err != nil {
		return Config{}, err
	}
	p := configParser{c: DefaultConfig(""), log: log, set: map[string]properties.Property{}, servers: map[uint64]properties.Property{}}
	p.c.ClientPortAddress = ""
	p.c.Admin.Enabled = true // ZooKeeper's default for a zoo.cfg (see AdminConfig)
	if hasDynamicFile(props) {
		if err := refuseStaticServers(props); err != nil {
			return Config{}, err
		}
	}
	for _, prop := range props {
		if err := p.apply(prop); err != nil {
			return Config{}, err
		}
		p.set[prop.Key] = prop
	}
	if err := p.checkRelations(); err != nil {
		return Config{}, err
	}
	p.c.fillDerived()
	p.c.initialText = text.String()
	return p.c, nil
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
		fmt.Fprintf(&b, "server.%d=%s:%d:%d:%s;%s:%d\n", sv.ID, bracketIPv6(sv.Host), sv.PeerPort, sv.ElectPort, role, bracketIPv6(host), port)
	}
	b.WriteString("version=" + strconv.FormatUint(c.ConfigVersion, 16))
	return b.String()
}

// bracketIPv6 writes an IPv6 host in brackets, as ZooKeeper's
// QuorumServer.delimitedHostString does.
func bracketIPv6(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}
