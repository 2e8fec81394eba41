package zkafkatest

import (
	"log/slog"
	"strings"
	"time"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/quorum"
)

// An Option configures StartCluster, StartZooKeeper and Start.
type Option func(*config)

type config struct {
	brokers      int
	firstBroker  int32
	ensemble     int
	topics       []TopicSpec
	brokerProps  [][2]string
	brokerMods   []func(*broker.Config)
	zkMods       []func(*quorum.Config)
	dataDir      string // "": t.TempDir() (StartCluster) or a new temporary directory (Start)
	zkAddr       string // the first ZooKeeper server's client address ("": 127.0.0.1:0)
	kafkaAddr    string // the first broker's client address ("": 127.0.0.1:0)
	log          *slog.Logger
	sessionLimit time.Duration
	externalZK   string // ExternalZooKeeper's connect string
	chroot       string
}

// TopicSpec is a topic StartCluster creates.
type TopicSpec struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
	Configs           map[string]string
}

// Brokers sets the number of brokers (StartCluster's default 1).
func Brokers(n int) Option { return func(c *config) { c.brokers = n } }

// FirstBrokerID sets the first broker's broker.id; the others follow
// (default 1: brokers 1..n).
func FirstBrokerID(id int32) Option { return func(c *config) { c.firstBroker = id } }

// Ensemble sets the number of ZooKeeper servers, myid 1..n (default 1:
// standalone).
func Ensemble(n int) Option { return func(c *config) { c.ensemble = n } }

// Topic creates a topic once the brokers run, and waits until each of its
// partitions has a leader.
func Topic(name string, partitions int32, replicationFactor int16) Option {
	return func(c *config) {
		c.topics = append(c.topics, TopicSpec{Name: name, Partitions: partitions, ReplicationFactor: replicationFactor})
	}
}

// Topics creates topics as Topic does, with configs.
func Topics(specs ...TopicSpec) Option {
	return func(c *config) { c.topics = append(c.topics, specs...) }
}

// BrokerConfig sets a server.properties key of every broker, checked as
// zkafka broker checks its file (a bad value fails the start). broker.id,
// listeners, advertised.listeners, log.dirs and zookeeper.connect are
// the harness's own and cannot be set.
func BrokerConfig(key, value string) Option {
	return func(c *config) { c.brokerProps = append(c.brokerProps, [2]string{key, value}) }
}

// ConfigureBroker applies mod to every broker's Config after the harness
// has set it up, before the broker starts (for what has no
// server.properties key). mod may replace the listeners (Listeners,
// ListenerProtocols, InterBroker): each is served behind a link, as
// StartBroker says; AdvertisedListeners stays the harness's.
func ConfigureBroker(mod func(*broker.Config)) Option {
	return func(c *config) { c.brokerMods = append(c.brokerMods, mod) }
}

// ConfigureZooKeeper applies mod to every ZooKeeper server's Config before
// it starts.
func ConfigureZooKeeper(mod func(*quorum.Config)) Option {
	return func(c *config) { c.zkMods = append(c.zkMods, mod) }
}

// DataDir keeps the servers' data under dir (zookeeper-N, kafka-N)
// instead of a temporary directory.
func DataDir(dir string) Option { return func(c *config) { c.dataDir = dir } }

// ZooKeeperAddr is the address (host:port) clients reach the first
// ZooKeeper server at; the others take the following ports (default
// 127.0.0.1:0, free ports).
func ZooKeeperAddr(addr string) Option { return func(c *config) { c.zkAddr = addr } }

// KafkaAddr is the address clients reach the first broker at; the others
// take the following ports (default 127.0.0.1:0, free ports).
func KafkaAddr(addr string) Option { return func(c *config) { c.kafkaAddr = addr } }

// Logger sends the servers' logs to log (default: discarded, or with
// ZKAFKA_TEST_LOG=1 in the environment, everything to stderr).
func Logger(log *slog.Logger) Option { return func(c *config) { c.log = log } }

// BrokerSessionTimeout is the brokers' ZooKeeper session timeout
// (zookeeper.session.timeout.ms, default 6 s here): how long a killed or
// paused broker stays registered.
func BrokerSessionTimeout(d time.Duration) Option { return func(c *config) { c.sessionLimit = d } }

// ExternalZooKeeper runs the brokers on the ZooKeeper at connect
// (host:port,...: Apache ZooKeeper, or a zkafka one shared by several
// clusters) instead of starting ZooKeeper servers: the cluster then has no
// ZooKeeper members to stop, pause or cut, and ZooKeeper() is connect.
// With Chroot, clusters can share it.
func ExternalZooKeeper(connect string) Option { return func(c *config) { c.externalZK = connect } }

// Chroot puts the brokers' metadata under path ("/kafka-a"), as a chroot
// in zookeeper.connect does; the brokers create it. ZooKeeper() stays
// without it (go-zookeeper takes no chroot): name the znodes with Chroot().
func Chroot(path string) Option { return func(c *config) { c.chroot = strings.TrimSuffix(path, "/") } }
