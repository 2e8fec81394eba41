package kafkaenv

import (
	"log/slog"
	"os"
	"sync/atomic"
	"testing"

	"github.com/zkafka/zkafka/zkafkatest"
)

// zkAddr is the ZooKeeper every broker uses, each under its own chroot.
var zkAddr string

// quorumPanics counts the in-process quorum server's recovered panics;
// Env.Stop reports them.
var quorumPanics atomic.Int64

// Main is TestMain for a package of Kafka tests: it starts the ZooKeeper,
// runs the tests, stops the ZooKeeper and exits with the tests' status.
func Main(m *testing.M) {
	addr, stop, err := startZooKeeper()
	if err != nil {
		os.Stderr.WriteString("starting ZooKeeper: " + err.Error() + "\n")
		os.Exit(1)
	}
	zkAddr = addr
	code := m.Run()
	stop()
	os.Exit(code)
}

// ZooKeeper returns the address (host:port, or a comma-separated list from
// ZKAFKA_TEST_ZK) of the ZooKeeper that Main started, without a chroot.
func ZooKeeper() string { return zkAddr }

// startZooKeeper returns the ZooKeeper to test against: ZKAFKA_TEST_ZK if
// set, else an in-process quorum server.
func startZooKeeper() (string, func(), error) {
	if a := os.Getenv("ZKAFKA_TEST_ZK"); a != "" {
		return a, func() {}, nil
	}
	return startQuorum()
}

// startQuorum starts zkafka's own ZooKeeper server in process, standalone,
// on 127.0.0.1 port 0: a zkafkatest cluster without brokers, whose
// ZooKeeper the tests' brokers share, each cluster under its chroot.
func startQuorum() (string, func(), error) {
	log := slog.New(&logHandler{panics: &quorumPanics, next: baseHandler()})
	cl, err := zkafkatest.Start(zkafkatest.Brokers(0), zkafkatest.Logger(log))
	if err != nil {
		return "", nil, err
	}
	return cl.ZooKeeper(), func() { cl.Close() }, nil
}
