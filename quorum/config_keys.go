package quorum

import (
	"fmt"
	"log/slog"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkafka/zkafka/internal/properties"
)

// The rules of each zoo.cfg key. The reference is Apache ZooKeeper 3.8's
// QuorumPeerConfig.parseProperties and the system properties that zoo.cfg
// sets (every key it does not know becomes "zookeeper."+key). zkafka is
// stricter where ZooKeeper accepts a value that cannot work:
//
//   - tickTime, initLimit, syncLimit must be >= 1 (ZooKeeper rejects only 0,
//     and initLimit/syncLimit only in an ensemble); tickTime at most
//     maxTickTime, so that 20 ticks (the default maxSessionTimeout) fit a
//     session timeout's int32 of milliseconds.
//   - clientPort 1-65535 (ZooKeeper takes 0 as "no client port");
//     maxClientCnxns >= 0 (0 = unlimited).
//   - minSessionTimeout -1 or 0 (both mean 2 ticks) or more;
//     maxSessionTimeout -1 (20 ticks) or >= 1; min <= max, as ZooKeeper.
//   - znode.container.checkIntervalMs >= 1 (a zero period panics a ticker;
//     ZooKeeper's timer throws on it too). jute.maxbuffer > 0, parsed as
//     Java's Integer.decode does (0x.., #.., 0.. octal).
//   - Booleans are "true" or "false" in any case, as ZooKeeper's
//     parseBoolean (ZooKeeper's Boolean.getBoolean system properties take
//     anything else as false; zkafka rejects it).
//   - snapCount below 2 and autopurge.snapRetainCount below 3 are raised to
//     2 and 3 with a warning, as ZooKeeper does.
//   - server.N: N from 1 to 255 (the id is the top byte of session ids, and
//     raft has no id 0), host:peerPort:electionPort[:participant|:observer]
//     [;[clientHost:]clientPort], IPv6 hosts in brackets, ports 1-65535,
//     peer and election ports different, no address used twice, at least
//     one participant. Multiple addresses ("|") are not supported.
//   - Features zkafka lacks are errors, not silent: hierarchical quorums
//     (group.N, weight.N).
//   - dynamicConfigFile: the server.N lines come from that file
//     (config_dynamic.go), as in ZooKeeper 3.5+.

const (
	maxServerID = 255
	maxTickTime = math.MaxInt32 / 20 // ms
)

// configParser applies zoo.cfg properties to a Config.
type configParser struct {
	c       Config
	log     *slog.Logger
	set     map[string]properties.Property // the keys given so far
	servers map[uint64]properties.Property // the server.N line of each id
	// minSession, maxSession are the values given (-1 = default).
	minSession, maxSession int64
	hasMin, hasMax         bool
}

func (p *configParser) apply(prop properties.Property) error {
	c := &p.c
	v := prop.Trimmed()
	var err error
	switch prop.Key {
	case "tickTime":
		err = millis(prop, 1, maxTickTime, &c.TickTime)
	case "initLimit":
		c.InitLimit, err = int32Prop(prop, 1)
	case "syncLimit":
		c.SyncLimit, err = int32Prop(prop, 1)
	case "dataDir":
		c.DataDir, err = nonEmpty(prop, "must name a directory")
	case "dataLogDir":
		c.DataLogDir, err = nonEmpty(prop, "must name a directory")
	case "clientPort":
		c.ClientPort, err = portProp(prop)
		c.clientPortGiven = true
	case "clientPortAddress":
		c.ClientPortAddress, err = hostProp(prop, v)
	case "maxClientCnxns":
		c.MaxClientCnxns, err = int32Prop(prop, 0)
	case "minSessionTimeout":
		p.minSession, err = prop.Int(-1, math.MaxInt32)
		if err != nil {
			err = prop.Bad("must be -1 or 0 (2 × tickTime) or " + properties.RangeText(1, math.MaxInt32) + " (milliseconds)")
		}
		p.hasMin = err == nil && p.minSession > 0
	case "maxSessionTimeout":
		p.maxSession, err = prop.Int(-1, math.MaxInt32)
		if err != nil || p.maxSession == 0 {
			err = prop.Bad("must be -1 (20 × tickTime) or " + properties.RangeText(1, math.MaxInt32) + " (milliseconds)")
		}
		p.hasMax = err == nil && p.maxSession > 0
	case "autopurge.snapRetainCount":
		c.SnapRetainCount, err = int32Prop(prop, math.MinInt32)
		if err == nil && c.SnapRetainCount < 3 {
			p.log.Warn("zoo.cfg: autopurge.snapRetainCount below 3; using 3", "value", v, "line", prop.Line)
			c.SnapRetainCount = 3
		}
	case "autopurge.purgeInterval":
		c.PurgeInterval, err = int32Prop(prop, math.MinInt32)
	case "4lw.commands.whitelist":
		c.FourLetterWords = parseWhitelist(v, p.log)
	case "jute.maxbuffer":
		c.JuteMaxBuffer, err = parseJuteMaxBuffer(prop)
	case PeerMaxSnapshotKey:
		var n int64
		n, err = prop.Int(minPeerMaxSnapshot, maxPeerMaxSnapshot)
		c.PeerMaxSnapshot = int(n)
	case "extendedTypesEnabled", "zookeeper.extendedTypesEnabled":
		c.ExtendedTypes, err = prop.Bool()
	case "enforceQuota", "zookeeper.enforceQuota":
		c.EnforceQuota, err = prop.Bool()
	case "snapCount":
		err = p.setSnapCount(prop)
	case "znode.container.checkIntervalMs":
		err = millis(prop, 1, math.MaxInt32, &c.ContainerInterval)
	case "DigestAuthenticationProvider.superDigest", "zookeeper.DigestAuthenticationProvider.superDigest", "superDigest":
		c.SuperDigest, err = superDigestProp(prop, v)
	default:
		if ok, err := p.applyObservability(prop); ok {
			return err
		}
		if ok, err := p.applyTLS(prop); ok {
			return err
		}
		if ok, err := p.applySASL(prop); ok {
			return err
		}
		return p.applyOther(prop, v)
	}
	return err
}

// applyOther handles server.N, the keys of features zkafka lacks, the keys
// ZooKeeper knows and zkafka ignores, and unknown keys.
func (p *configParser) applyOther(prop properties.Property, v string) error {
	key := prop.Key
	switch {
	case strings.HasPrefix(key, "server."):
		return p.addServer(prop, v)
	case strings.HasPrefix(key, "group.") || strings.HasPrefix(key, "weight."):
		return prop.Bad("hierarchical quorums (group.N, weight.N) are not supported: zkafka uses majority quorums of the server.N lines")
	case key == "dynamicConfigFile":
		return p.loadDynamicFile(prop)
	case key == "reconfigEnabled":
		var err error
		p.c.ReconfigEnabled, err = prop.Bool()
		return err
	}
	if check, ok := ignoredKeys[key]; ok || hasIgnoredPrefix(key) {
		if check != nil {
			if err := check(prop); err != nil {
				return err
			}
		}
		p.log.Debug("zoo.cfg: key accepted and ignored", "key", key)
		return nil
	}
	p.log.Warn("zoo.cfg: unknown key ignored", "key", key, "line", prop.Line)
	return nil
}

func (p *configParser) setSnapCount(prop properties.Property) error {
	n, err := prop.Int(math.MinInt32, math.MaxInt32)
	if err != nil {
		return err
	}
	if n < 2 {
		// ZooKeeperServer.getSnapCount: "SnapCount should be 2 or more".
		p.log.Warn("zoo.cfg: snapCount below 2; using 2", "value", n, "line", prop.Line)
		n = 2
	}
	p.c.SnapCount = uint64(n)
	return nil
}

// checkRelations checks what involves more than one key.
func (p *configParser) checkRelations() error {
	if err := p.checkSessionTimeouts(); err != nil {
		return err
	}
	if err := p.checkTLS(); err != nil {
		return err
	}
	if err := p.checkSASL(); err != nil {
		return err
	}
	if len(p.c.Servers) == 0 {
		return nil
	}
	if !slices.ContainsFunc(p.c.Servers, func(s ServerSpec) bool { return !s.Observer }) {
		return p.servers[p.c.Servers[0].ID].Bad("an ensemble needs at least one participant; every server.N line is an observer")
	}
	return p.checkAddresses()
}

// checkSessionTimeouts fills the session timeouts from tickTime where they
// are not given, and checks min <= max (QuorumPeerConfig's rule).
func (p *configParser) checkSessionTimeouts() error {
	tick := p.c.TickTime
	minT, maxT := 2*tick, 20*tick
	if p.hasMin {
		minT = time.Duration(p.minSession) * time.Millisecond
	}
	if p.hasMax {
		maxT = time.Duration(p.maxSession) * time.Millisecond
	}
	switch {
	case minT <= maxT:
		p.c.MinSessionTimeout, p.c.MaxSessionTimeout = minT, maxT
		return nil
	case p.hasMin && p.hasMax:
		return p.set["minSessionTimeout"].Bad(fmt.Sprintf("must not be larger than maxSessionTimeout (%d)", p.maxSession))
	case p.hasMin:
		return p.set["minSessionTimeout"].Bad(fmt.Sprintf("must not be larger than maxSessionTimeout (%d, 20 × tickTime)", maxT.Milliseconds()))
	}
	return p.set["maxSessionTimeout"].Bad(fmt.Sprintf("must not be smaller than minSessionTimeout (%d, 2 × tickTime)", minT.Milliseconds()))
}

// checkAddresses rejects a peer or election address given twice.
func (p *configParser) checkAddresses() error {
	seen := map[string]uint64{}
	for _, sv := range p.c.Servers {
		for _, port := range []int{sv.PeerPort, sv.ElectPort} {
			addr := net.JoinHostPort(sv.Host, strconv.Itoa(port))
			if other, dup := seen[addr]; dup {
				return p.servers[sv.ID].Bad(fmt.Sprintf("address %s is also an address of server.%d", addr, other))
			}
			seen[addr] = sv.ID
		}
	}
	return nil
}

// addServer parses server.N=host:peerPort:electionPort[:participant|:observer][;[clientHost:]clientPort].
func (p *configParser) addServer(prop properties.Property, value string) error {
	const form = "must be host:peerPort:electionPort[:participant|:observer][;[clientHost:]clientPort]"
	id, err := strconv.ParseUint(strings.TrimPrefix(prop.Key, "server."), 10, 64)
	if err != nil || id < 1 || id > maxServerID {
		return prop.Bad(fmt.Sprintf("the N of server.N must be a server id from 1 to %d", maxServerID))
	}
	for _, sv := range p.c.Servers {
		if sv.ID == id {
			return prop.Bad(fmt.Sprintf("server %d is given twice", id))
		}
	}
	s := ServerSpec{ID: id}
	addr, client, hasClient := strings.Cut(value, ";")
	if strings.Contains(addr, "|") {
		return prop.Bad("multiple addresses (|) are not supported; " + form)
	}
	parts := hostAndPorts(addr)
	if len(parts) < 3 || len(parts) > 4 || strings.Contains(client, ";") || parts[0] == "" {
		return prop.Bad(form)
	}
	s.Host = parts[0]
	if s.PeerPort, err = parsePort(parts[1]); err != nil {
		return prop.Bad("peer port " + err.Error() + "; " + form)
	}
	if s.ElectPort, err = parsePort(parts[2]); err != nil {
		return prop.Bad("election port " + err.Error() + "; " + form)
	}
	if s.PeerPort == s.ElectPort {
		return prop.Bad("the peer and election ports must be different")
	}
	if len(parts) == 4 {
		switch strings.ToLower(strings.TrimSpace(parts[3])) {
		case "observer":
			s.Observer = true
		case "participant":
		default:
			return prop.Bad(fmt.Sprintf("role %q must be participant or observer", parts[3]))
		}
	}
	if hasClient {
		cp := hostAndPorts(client)
		if len(cp) > 2 {
			return prop.Bad("client address must be port or host:port; " + form)
		}
		if len(cp) == 2 {
			s.ClientHost = cp[0]
		}
		if s.ClientPort, err = parsePort(cp[len(cp)-1]); err != nil {
			return prop.Bad("client port " + err.Error() + "; " + form)
		}
	}
	p.c.Servers = append(p.c.Servers, s)
	p.servers[id] = prop
	return nil
}

// hostAndPorts splits host:port:... as ZooKeeper's ConfigUtils.getHostAndPort
// does: an IPv6 host in brackets, and (Java's String.split) no trailing
// empty parts.
func hostAndPorts(s string) []string {
	var parts []string
	if strings.HasPrefix(s, "[") {
		i := strings.Index(s, "]:")
		if i < 0 {
			return []string{s}
		}
		parts = append([]string{s[1:i]}, strings.Split(s[i+2:], ":")...)
	} else {
		parts = strings.Split(s, ":")
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("%q must be an integer from 1 to 65535", s)
	}
	return n, nil
}

func portProp(prop properties.Property) (int, error) {
	n, err := prop.Int(1, 65535)
	return int(n), err
}

func int32Prop(prop properties.Property, lo int64) (int, error) {
	n, err := prop.Int(lo, math.MaxInt32)
	return int(n), err
}

func millis(prop properties.Property, lo, hi int64, dst *time.Duration) error {
	n, err := prop.Int(lo, hi)
	if err != nil {
		return prop.Bad("must be " + properties.RangeText(lo, hi) + " (milliseconds)")
	}
	*dst = time.Duration(n) * time.Millisecond
	return nil
}

func nonEmpty(prop properties.Property, allowed string) (string, error) {
	v := prop.Trimmed()
	if v == "" {
		return "", prop.Bad(allowed)
	}
	return v, nil
}

// hostProp checks a host name or IP address (an IPv6 one may be in
// brackets); the name is resolved when the server listens.
func hostProp(prop properties.Property, v string) (string, error) {
	h := strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	if net.ParseIP(h) != nil {
		return h, nil
	}
	valid := h != "" && !strings.ContainsFunc(h, func(r rune) bool {
		return !(r == '-' || r == '.' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	if !valid {
		return "", prop.Bad("must be a host name or an IP address (without a port)")
	}
	return h, nil
}

// superDigestProp checks the user:base64(sha1(user:password)) form; a
// value without it could never match, silently disabling the super user.
func superDigestProp(prop properties.Property, v string) (string, error) {
	user, digest, ok := strings.Cut(v, ":")
	if !ok || user == "" || digest == "" {
		return "", prop.Bad("must be user:digest, the digest being base64(sha1(user:password))")
	}
	return v, nil
}

// parseWhitelist reads 4lw.commands.whitelist: comma-separated words, *
// for all. Unknown words are logged (ZooKeeper ignores them silently).
func parseWhitelist(value string, log *slog.Logger) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Split(value, ",") {
		w = strings.TrimSpace(w)
		switch {
		case w == "*":
			for _, all := range fourLetterWords {
				m[all] = true
			}
		case slices.Contains(fourLetterWords, w):
			m[w] = true
		case w != "":
			log.Warn("zoo.cfg: unknown four-letter word in 4lw.commands.whitelist", "word", w)
		}
	}
	return m
}

// parseJuteMaxBuffer parses jute.maxbuffer as Java's Integer.decode (which
// Integer.getInteger uses): decimal, 0x/0X/# hex, 0 octal; it must be > 0.
func parseJuteMaxBuffer(prop properties.Property) (int, error) {
	v := prop.Trimmed()
	base := 10
	switch {
	case strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X"):
		v, base = v[2:], 16
	case strings.HasPrefix(v, "#"):
		v, base = v[1:], 16
	case len(v) > 1 && v[0] == '0':
		v, base = v[1:], 8
	}
	n, err := strconv.ParseInt(v, base, 32)
	if err != nil || n <= 0 || strings.HasPrefix(v, "+") || strings.HasPrefix(v, "-") {
		return 0, prop.Bad("must be a size in bytes from 1 to 2147483647 (decimal, 0x hex or 0 octal)")
	}
	return int(n), nil
}

// ignoredKeys are zoo.cfg keys ZooKeeper 3.8 knows that change nothing
// zkafka does; they are logged at debug level, and those QuorumPeerConfig
// parses are checked as it checks them (nil: any value).
var ignoredKeys = map[string]func(properties.Property) error{
	"standaloneEnabled": checkBool, "localSessionsEnabled": checkBool,
	"localSessionsUpgradingEnabled": checkBool, "quorumListenOnAllIPs": checkBool, "syncEnabled": checkBool,
	"jvm.pause.monitor":    checkBool,
	"multiAddress.enabled": checkBool, "multiAddress.reachabilityCheckEnabled": checkBool,
	"observerMasterPort": checkInt, "clientPortListenBacklog": checkInt,
	"connectToLearnerMasterLimit": checkInt, "quorum.cnxn.threads.size": checkInt,
	"multiAddress.reachabilityCheckTimeoutMs": checkInt, "jvm.pause.info-threshold.ms": checkLong,
	"jvm.pause.warn-threshold.ms": checkLong, "jvm.pause.sleep.time.ms": checkLong,
	"electionAlg": checkElectionAlg, "peerType": checkPeerType,
	"quorum.auth.learner.saslLoginContext": nil,
	"quorum.auth.server.saslLoginContext":  nil, "quorum.auth.kerberos.servicePrincipal": nil,
	"oraclePath": nil,
	// System properties ZooKeeper reads (zoo.cfg sets them as zookeeper.KEY).
	"preAllocSize": nil, "globalOutstandingLimit": nil, "maxCnxns": nil,
	"commitLogCount": nil, "snapSizeLimitInKb": nil, "txnLogSizeLimitInKb": nil, "fsync.warningthresholdms": nil,
	"forceSync": nil, "skipACL": nil, "leaderServes": nil, "cnxTimeout": nil,
	"electionPortBindRetry": nil, "audit.enable": nil, "digest.enabled": nil, "snapshot.trust.empty": nil,
	"snapshot.compression.method": nil, "learner.asyncSending": nil, "learner.closeSocketAsync": nil,
	"leader.closeSocketAsync": nil, "flushDelay": nil, "maxWriteQueuePollTime": nil, "maxBatchSize": nil,
	"requestThrottleLimit": nil, "requestThrottleStallTime": nil, "requestThrottleDropStale": nil,
	"largeRequestMaxBytes": nil, "largeRequestThreshold": nil, "outstandingHandshake.limit": nil,
	"watchManagerName": nil, "closeSessionTxn.enabled": nil,
	"kerberos.removeHostFromPrincipal":   nil,
	"kerberos.removeRealmFromPrincipal":  nil,
	"serializeLastProcessedZxid.enabled": nil,
	// ssl.* keys of the client port that change nothing zkafka does (no
	// revocation checks; Go verifies no client host names, as ZooKeeper's
	// server side by default; the handshake has the connection's deadline).
	"ssl.crl": checkBool, "ssl.ocsp": checkBool,
	"ssl.handshakeDetectionTimeoutMillis": nil, "ssl.authProvider": nil, "ssl.sslProvider": nil,
	"ssl.context.supplier.class": nil, "ssl.clientHostnameVerification": checkBool,
}

// ignoredPrefixes are families of such keys.
var ignoredPrefixes = []string{"metricsProvider.", "ssl.quorum.", "netty.", "connection_throttle_", "admin."}

func hasIgnoredPrefix(key string) bool {
	return slices.ContainsFunc(ignoredPrefixes, func(p string) bool { return strings.HasPrefix(key, p) })
}

func checkBool(prop properties.Property) error { _, err := prop.Bool(); return err }

// checkInt and checkLong: Integer.parseInt and Long.parseLong.
func checkInt(prop properties.Property) error {
	_, err := prop.Int(math.MinInt32, math.MaxInt32)
	return err
}

func checkLong(prop properties.Property) error {
	_, err := prop.Int(math.MinInt64, math.MaxInt64)
	return err
}

// checkElectionAlg: "Invalid electionAlg value. Only 3 is supported."
func checkElectionAlg(prop properties.Property) error {
	if prop.Trimmed() != "3" {
		return prop.Bad("must be 3 (fast leader election), the only one ZooKeeper 3.8 supports")
	}
	return nil
}

func checkPeerType(prop properties.Property) error {
	switch strings.ToLower(prop.Trimmed()) {
	case "observer", "participant":
		return nil
	}
	return prop.Bad("must be participant or observer")
}
