// Package ensemble tests zkafka's ZooKeeper ensemble with real processes on
// 127.0.0.1 (bin/zkafka, or $ZKAFKA_BIN, started through compat-tests/zkserver)
// driven by go-zookeeper: the start-up order of a five-voter ensemble, kill -9
// of the leader under writes, SIGSTOP of the leader past the session timeout,
// one session (its ephemeral, its data, exists and child watches) through 25
// kills and stops of the leader ($ZKAFKA_FAILOVER_TICK, $ZKAFKA_FAILOVER_ROUNDS
// run it at another tickTime or length),
// network partitions made by a fault-injecting TCP proxy between the servers
// (all three checked for linearizability with porcupine), observers and
// read-only mode, a follower that catches up from the leader's snapshot after
// the log was compacted, writes that go on while garbage storms the peer and
// election ports (storm_test.go: peak RSS bounded, unknown server ids
// refused), and SessionMoved with two raw connections (the
// compat build tag runs that scenario against Apache ZooKeeper too).
//
// FaultProxy sits between two servers' peer ports: zkafka's peer transport
// uses one TCP connection per direction (server i dials server j to send to
// it), so a proxy per ordered pair cuts exactly one direction.
package ensemble
