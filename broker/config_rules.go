package broker

import (
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkafka/zkafka/internal/properties"
)

// The rules of server.properties values, from Kafka's KafkaConfig
// (its ConfigDef types and validators, and validateValues):
//
//   - Integers are Java's Integer/Long.parseLong of the trimmed value, in the
//     range of the key's type (INT: 32 bits, LONG: 64) and of its validator
//     (num.partitions >= 1, log.segment.bytes >= 14, socket.request.max.bytes
//     >= 1, message.max.bytes >= 0, log.retention.check.interval.ms >= 1,
//     log.flush.interval.messages >= 1, log.roll.hours >= 1, ...).
//   - Booleans are "true" or "false" in any case.
//   - broker.id from 0 to reserved.broker.max.id (1000), or any id >= 0 with
//     broker.id.generation.enable=false. Kafka's -1 (an id generated in
//     ZooKeeper) is not supported.
//   - log.dirs wins over log.dir; log.roll.ms over log.roll.hours;
//     log.retention.ms over .minutes over .hours, whose result must be >= 1
//     or negative (unlimited).
//   - listeners: NAME://host:port, different names and ports;
//     advertised.listeners: never 0.0.0.0, names among those of
//     listeners; each name's protocol from listener.security.protocol.map
//     (all four are served); an SSL or SASL_SSL listener needs
//     ssl.keystore.location (config_tls.go), a SASL listener mechanisms
//     zkafka offers and, for PLAIN, its users (config_sasl.go).
//   - zookeeper.connect: host[:port],...[/chroot], a chroot being a valid
//     ZooKeeper path (ZooKeeper's ConnectStringParser).
//
// zkafka is stricter than Kafka where a value Kafka has no validator for
// would disable a feature: zookeeper.session.timeout.ms >= 1,
// default.replication.factor 1-32767, group.min/max.session.timeout.ms >= 1
// with min <= max, offset.metadata.max.bytes >= 1,
// group.initial.rebalance.delay.ms >= 0, log.flush.interval.ms >= 0.

// intIn parses v as a decimal integer in [lo, hi] into dst.
func intIn[T int16 | int32 | int64](v string, lo, hi int64, dst *T) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return fmt.Errorf("must be %s", properties.RangeText(lo, hi))
	}
	*dst = T(n)
	return nil
}

// millisIn parses v as milliseconds in [lo, hi] into dst.
func millisIn(v string, lo, hi int64, dst *time.Duration) error {
	var n int64
	if err := intIn(v, lo, hi, &n); err != nil {
		return fmt.Errorf("must be %s (milliseconds)", properties.RangeText(lo, hi))
	}
	*dst = durationOf(n, time.Millisecond)
	return nil
}

// durationOf is n units, with the values beyond time.Duration's 292 years
// (Kafka's Long.MAX_VALUE milliseconds, which means "never") taken as the
// longest Duration.
func durationOf(n int64, unit time.Duration) time.Duration {
	if n > int64(math.MaxInt64/unit) {
		return math.MaxInt64
	}
	return time.Duration(n) * unit
}

// listenersProp parses listeners or advertised.listeners.
func listenersProp(v string, advertised bool) ([]string, error) {
	list := splitList(v)
	if len(list) == 0 {
		return nil, fmt.Errorf("must be a comma-separated list of NAME://host:port")
	}
	names, ports := map[string]bool{}, map[string]bool{}
	for _, l := range list {
		name, addr, err := parseListener(l)
		if err != nil {
			return nil, err
		}
		host, port, _ := net.SplitHostPort(addr)
		switch {
		case names[name]:
			return nil, fmt.Errorf("each listener must have a different name (%s is given twice)", name)
		case !advertised && port != "0" && ports[port]:
			return nil, fmt.Errorf("each listener must have a different port (%s is given twice)", port)
		case advertised && host == "0.0.0.0":
			return nil, fmt.Errorf("cannot use the nonroutable meta-address 0.0.0.0; use a routable IP address")
		}
		names[name], ports[port] = true, true
	}
	return list, nil
}

// zkConnectProp checks host[:port],...[/chroot] as ZooKeeper's
// ConnectStringParser does (the port defaults to 2181).
func zkConnectProp(v string) (string, error) {
	const form = "must be host[:port][,host[:port]...][/chroot]"
	servers, chroot, hasChroot := strings.Cut(v, "/")
	if servers == "" {
		return "", fmt.Errorf("%s", form)
	}
	for _, hp := range strings.Split(servers, ",") {
		host, port := hp, "2181"
		if strings.HasPrefix(hp, "[") || strings.Count(hp, ":") == 1 {
			var err error
			if host, port, err = net.SplitHostPort(hp); err != nil {
				return "", fmt.Errorf("%s; %q is not host:port", form, hp)
			}
		}
		if n, err := strconv.Atoi(port); host == "" || err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("%s; %q is not host:port with a port from 1 to 65535", form, hp)
		}
	}
	if hasChroot && chroot != "" {
		if err := checkChroot("/" + chroot); err != nil {
			return "", fmt.Errorf("%s; the chroot %v", form, err)
		}
	}
	return v, nil
}

// checkChroot is ZooKeeper's PathUtils.validatePath for a chroot.
func checkChroot(path string) error {
	if strings.HasSuffix(path, "/") {
		return fmt.Errorf("%q must not end with /", path)
	}
	for _, seg := range strings.Split(path[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%q has an empty, . or .. element", path)
		}
	}
	if strings.ContainsFunc(path, func(r rune) bool {
		return r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0xd800 && r <= 0xf8ff || r >= 0xfff0
	}) {
		return fmt.Errorf("%q has a character ZooKeeper does not allow in a path", path)
	}
	return nil
}

// relatedKeys are the keys whose values depend on each other; they are
// applied once every key is read.
type relatedKeys struct {
	brokerID              properties.Property
	idGeneration          bool // broker.id.generation.enable was given false
	reservedMax           int64
	reservedMaxSet        bool
	logDirs, logDir       properties.Property
	roll, rollHours       properties.Property
	retMs, retMin, retHrs properties.Property
	seen                  map[string]properties.Property // every key read
}

func (r *relatedKeys) setBrokerIDRule(p properties.Property) error {
	if p.Key == "broker.id.generation.enable" {
		on, err := p.Bool()
		r.idGeneration = !on
		return err
	}
	n, err := p.Int(0, math.MaxInt32)
	r.reservedMax, r.reservedMaxSet = n, true
	return err
}

func (r *relatedKeys) setLogDirs(p properties.Property) error {
	if len(splitList(p.Trimmed())) == 0 {
		return fmt.Errorf("must be a comma-separated list of directories")
	}
	if p.Key == "log.dirs" {
		r.logDirs = p
	} else {
		r.logDir = p
	}
	return nil
}

// setTime type-checks the roll and retention keys (Kafka checks every
// key's type, used or not) and keeps them for apply.
func (r *relatedKeys) setTime(p properties.Property) error {
	var err error
	switch p.Key {
	case "log.roll.ms":
		_, err = p.Int(1, math.MaxInt64)
		r.roll = p
	case "log.roll.hours":
		_, err = p.Int(1, math.MaxInt32)
		r.rollHours = p
	case "log.retention.ms":
		_, err = p.Int(math.MinInt64, math.MaxInt64)
		r.retMs = p
	case "log.retention.minutes":
		_, err = p.Int(math.MinInt32, math.MaxInt32)
		r.retMin = p
	case "log.retention.hours":
		_, err = p.Int(math.MinInt32, math.MaxInt32)
		r.retHrs = p
	}
	return err
}

// apply applies the precedences and checks the relations.
func (r *relatedKeys) apply(cfg *Config) error {
	if err := r.checkBrokerID(cfg); err != nil {
		return err
	}
	switch {
	case r.logDirs.Key != "":
		cfg.LogDirs = splitList(r.logDirs.Trimmed())
	case r.logDir.Key != "":
		cfg.LogDirs = splitList(r.logDir.Trimmed())
	}
	if p, unit := r.effective(r.roll, r.rollHours, properties.Property{}); p.Key != "" {
		n, _ := strconv.ParseInt(p.Trimmed(), 10, 64)
		cfg.LogRollTime = durationOf(n, unit)
	}
	if p, unit := r.effective(r.retMs, r.retHrs, r.retMin); p.Key != "" {
		n, _ := strconv.ParseInt(p.Trimmed(), 10, 64)
		switch {
		case n == 0:
			return p.Bad("must be -1 (unlimited) or >= 1 (the retention, log.retention.ms over .minutes over .hours)")
		case n < 0:
			cfg.LogRetention = -1
		default:
			cfg.LogRetention = durationOf(n, unit)
		}
	}
	return r.checkGroupTimeouts(cfg)
}

// checkGroupTimeouts checks min <= max of the group session timeouts
// (Kafka does not; with min above max every JoinGroup fails).
func (r *relatedKeys) checkGroupTimeouts(cfg *Config) error {
	g := cfg.Groups
	if g.MinSessionTimeout <= g.MaxSessionTimeout {
		return nil
	}
	p := r.seen["group.min.session.timeout.ms"]
	if p.Key == "" {
		p = r.seen["group.max.session.timeout.ms"]
	}
	return p.Bad(fmt.Sprintf("group.min.session.timeout.ms (%d) must not be larger than group.max.session.timeout.ms (%d)",
		g.MinSessionTimeout.Milliseconds(), g.MaxSessionTimeout.Milliseconds()))
}

// effective picks ms over minutes over hours (any may be unset) and the
// unit of the one picked.
func (r *relatedKeys) effective(ms, hours, minutes properties.Property) (properties.Property, time.Duration) {
	switch {
	case ms.Key != "":
		return ms, time.Millisecond
	case minutes.Key != "":
		return minutes, time.Minute
	case hours.Key != "":
		return hours, time.Hour
	}
	return properties.Property{}, 0
}

// checkBrokerID is KafkaConfig's rule: with id generation on (the
// default), a configured id must not reach into the generated range above
// reserved.broker.max.id.
func (r *relatedKeys) checkBrokerID(cfg *Config) error {
	maxID := int64(1000)
	if r.reservedMaxSet {
		maxID = r.reservedMax
	}
	if r.idGeneration || int64(cfg.BrokerID) <= maxID {
		return nil
	}
	p := r.brokerID
	return p.Bad(fmt.Sprintf("must be from 0 to reserved.broker.max.id (%d), or set broker.id.generation.enable=false", maxID))
}

// ignoredProperties are server.properties keys Kafka knows that change
// nothing zkafka does (threads, buffers, replication and security
// settings); they are logged at debug level, after the check of their type
// (nil: any value).
var ignoredProperties = map[string]func(string) error{
	"num.network.threads": atLeast(1, math.MaxInt32), "num.io.threads": atLeast(1, math.MaxInt32),
	"num.recovery.threads.per.data.dir": atLeast(1, math.MaxInt32), "background.threads": atLeast(1, math.MaxInt32),
	"num.replica.fetchers": atLeast(1, math.MaxInt32), "queued.max.requests": atLeast(1, math.MaxInt32),
	"socket.send.buffer.bytes": atLeast(math.MinInt32, math.MaxInt32), "socket.receive.buffer.bytes": atLeast(math.MinInt32, math.MaxInt32),
	"offsets.topic.replication.factor": atLeast(1, math.MaxInt16), "offsets.topic.num.partitions": atLeast(1, math.MaxInt32),
	"offsets.topic.segment.bytes":     atLeast(1, math.MaxInt32),
	"zookeeper.connection.timeout.ms": atLeast(math.MinInt32, math.MaxInt32), "zookeeper.max.in.flight.requests": atLeast(1, math.MaxInt32),
	"log.flush.scheduler.interval.ms": atLeast(math.MinInt64, math.MaxInt64), "log.flush.offset.checkpoint.interval.ms": atLeast(0, math.MaxInt32),
	"log.roll.jitter.ms": atLeast(math.MinInt64, math.MaxInt64), "log.roll.jitter.hours": atLeast(0, math.MaxInt32),
	"log.index.size.max.bytes": atLeast(4, math.MaxInt32), "log.index.interval.bytes": atLeast(0, math.MaxInt32),
	"log.segment.delete.delay.ms": atLeast(0, math.MaxInt64), "max.connections": atLeast(0, math.MaxInt32),
	"max.connections.per.ip": atLeast(0, math.MaxInt32), "connections.max.idle.ms": atLeast(math.MinInt64, math.MaxInt64),
	"log.preallocate":               isBool,
	"inter.broker.protocol.version": nil, "log.message.format.version": nil, "metric.reporters": nil,
	"principal.builder.class": nil, "max.connections.per.ip.overrides": nil,
	"control.plane.listener.name": nil, "zookeeper.clientCnxnSocket": nil, "kafka.metrics.reporters": nil,
	"kafka.metrics.polling.interval.secs": nil, "create.topic.policy.class.name": nil, "alter.config.policy.class.name": nil,
}

// ignoredPrefixes are families of such keys.
var ignoredPrefixes = []string{"ssl.", "sasl.", "listener.name.", "log.cleaner.", "replica.", "transaction.",
	"metrics.", "quota.", "zookeeper.ssl.", "password.encoder.",
	"delegation.token.", "producer.id.", "transactional.id.", "offsets.", "group.", "socket.", "log.index."}

func hasIgnoredPrefix(key string) bool {
	return slices.ContainsFunc(ignoredPrefixes, func(p string) bool { return strings.HasPrefix(key, p) })
}

func atLeast(lo, hi int64) func(string) error {
	return func(v string) error {
		var n int64
		return intIn(v, lo, hi, &n)
	}
}

func isBool(v string) error {
	_, err := properties.Property{Value: v}.Bool()
	if err != nil {
		return fmt.Errorf("must be true or false")
	}
	return nil
}
