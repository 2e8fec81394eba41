package kafkago

import (
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/zkafka/zkafka/quorum"
)

// startQuorum starts zkafka's own ZooKeeper server in process, standalone,
// on 127.0.0.1 port 0.
func startQuorum() (string, func(), error) {
	dir, err := os.MkdirTemp("", "kafkago-zk-")
	if err != nil {
		return "", nil, err
	}
	cfg := quorum.DefaultConfig(dir)
	cfg.ClientPort = 0
	cfg.ClientPortAddress = "127.0.0.1"
	cfg.TickTime = 500 * time.Millisecond
	cfg.MaxClientCnxns = 0
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("ZKAFKA_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	srv, err := quorum.StartWithListener(cfg, log, l)
	if err != nil {
		l.Close()
		return "", nil, err
	}
	return l.Addr().String(), func() { srv.Close(); os.RemoveAll(dir) }, nil
}
