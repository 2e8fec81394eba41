// Package zkafkatest runs real ZooKeeper and Kafka clusters inside Go
// tests: zkafka's own ZooKeeper server (package quorum) and brokers
// (package broker), in the test's process, on 127.0.0.1 with free ports,
// their data in t.TempDir(), shut down by t.Cleanup, with faults to inject
// while they run. Like cmd/zkafka it wires both quorum and broker, so it
// sits at the cmd level of the layout (DESIGN.md), beside cmd/zkafka, which
// serves the same faults over HTTP (`zkafka run --control`, control.go).
//
//	cl := zkafkatest.StartCluster(t, zkafkatest.Brokers(3), zkafkatest.Topic("t", 6, 3))
//	c, _ := kgo.NewClient(kgo.SeedBrokers(cl.Seeds()...))
//	zc, _, _ := zk.Connect(cl.ZooKeeperServers(), 10*time.Second)
//	cl.Kill(zkafkatest.Broker(2))
//
// One ZooKeeper server and one broker start in tens of milliseconds
// (BenchmarkStart, beside kfake's NewCluster).
//
// # Members and links
//
// A cluster's members are its brokers (broker.id 1..n) and ZooKeeper
// servers (myid 1..n, 1 when standalone); Clients stands for everything
// outside, OtherBrokers for the brokers as clients of one broker. Every
// member is reached through links, in-process TCP proxies
// (internal/faultproxy), one per direction of each pair that talks:
//
//	clients ──▶ broker n           (its advertised PLAINTEXT listener)
//	broker m ──▶ broker n          (m's connections to n's INTERNAL listener, inter.broker.listener.name)
//	brokers ──▶ broker n           (the address n advertises for INTERNAL: n's connections to itself)
//	clients ──▶ zookeeper n        (the connect string)
//	broker n ──▶ zookeeper m       (each broker's zookeeper.connect)
//	zookeeper n ──▶ zookeeper m    (each server's server.N lines name its links)
//
// A broker dials another's advertised INTERNAL address through its own
// pair link (broker.Config.InterBrokerDial), so Cut(Broker(1), Broker(2))
// parts exactly those two while both keep ZooKeeper and their clients.
// A link's address stays the member's across restarts. Faults act on
// links: Cut resets a link's connections and refuses new ones; Pause holds
// every byte on every link of a member, both ways, until Resume; Kill cuts
// the links from a member before it shuts down, so it says no goodbye
// (a broker's ZooKeeper session stays until it expires, and it makes no
// controlled shutdown), and a killed broker's logs lose what they had not
// fsynced, as in a crash (see Kill).
//
// # Your own ZooKeeper and brokers
//
// ExternalZooKeeper runs the brokers on a ZooKeeper the test already has
// (Apache ZooKeeper, or one zkafkatest cluster's shared by several, each
// under its Chroot); StartBroker starts a broker of the caller's own
// broker.Config (SSL, SASL, any listeners, each behind a link). The
// project's Kafka compat tests (compat-tests/internal/kafkaenv) run this
// way.
//
// # Interception
//
// InterceptKafka and InterceptZooKeeper add rules that the brokers' and
// servers' request hooks (broker.Config.RequestHook,
// quorum.Config.RequestHook) apply before a request runs: answer with an
// error code, delay, or drop the connection; tried in the order added, the
// first match acts alone, Count limits how many requests a rule takes (see
// KafkaRule).
//
// # Leadership
//
// MoveLeader and MoveController move partition leadership and the
// controller as Kafka's tools do, through ZooKeeper
// (/admin/preferred_replica_election, deleting /controller).
package zkafkatest
