package kafkaenv

import (
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkafka/zkafka/quorum"
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
// on 127.0.0.1 port 0.
func startQuorum() (string, func(), error) {
	dir, err := os.MkdirTemp("", "kafkaenv-zk-")
	if err != nil {
		return "", nil, err
	}
	cfg := quorum.DefaultConfig(dir)
	cfg.ClientPort, cfg.ClientPortAddress = 0, "127.0.0.1"
	cfg.TickTime = 500 * time.Millisecond
	cfg.MaxClientCnxns = 0
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	log := slog.New(&logHandler{panics: &quorumPanics, next: baseHandler()})
	srv, err := quorum.StartWithListener(cfg, log, l)
	if err != nil {
		l.Close()
		os.RemoveAll(dir)
		return "", nil, err
	}
	return l.Addr().String(), func() { srv.Close(); os.RemoveAll(dir) }, nil
}
