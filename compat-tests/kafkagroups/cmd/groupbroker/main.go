// Command groupbroker starts zkafka's ZooKeeper (quorum, standalone) and
// one Kafka broker in one process on the given 127.0.0.1 ports, for
// compat-tests/kafkagroups/compat-part.sh and scripts/bench.d/30-groups.sh
// (`zkafka run` does not start the broker yet). It prints "ready" once
// the broker accepts connections and stops on SIGINT or SIGTERM.
//
//	groupbroker -dir DIR -zk-port 2181 -kafka-port 9092 [-initial-delay 0s]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/quorum"
)

func main() {
	dir := flag.String("dir", "", "data directory (required)")
	zkPort := flag.Int("zk-port", 2181, "ZooKeeper client port on 127.0.0.1")
	kafkaPort := flag.Int("kafka-port", 9092, "Kafka port on 127.0.0.1")
	delay := flag.Duration("initial-delay", 0, "group.initial.rebalance.delay.ms")
	verbose := flag.Bool("v", false, "log at debug level")
	flag.Parse()
	if *dir == "" {
		flag.Usage()
		os.Exit(2)
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if err := run(*dir, *zkPort, *kafkaPort, *delay, log); err != nil {
		fmt.Fprintln(os.Stderr, "groupbroker:", err)
		os.Exit(1)
	}
}

func run(dir string, zkPort, kafkaPort int, delay time.Duration, log *slog.Logger) error {
	qcfg := quorum.DefaultConfig(filepath.Join(dir, "zookeeper"))
	qcfg.ClientPortAddress, qcfg.ClientPort = "127.0.0.1", zkPort
	qcfg.MaxClientCnxns = 0
	zl, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(zkPort)))
	if err != nil {
		return err
	}
	zk, err := quorum.StartWithListener(qcfg, log.With("server", "zookeeper"), zl)
	if err != nil {
		return err
	}
	defer zk.Close()
	cfg := broker.DefaultConfig(filepath.Join(dir, "kafka"))
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(kafkaPort))
	cfg.Listeners = []string{"PLAINTEXT://" + addr}
	cfg.ZooKeeperConnect = zl.Addr().String()
	cfg.Groups.InitialRebalanceDelay = delay
	b, err := broker.New(cfg, log.With("server", "kafka"))
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- b.Serve(l) }()
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sig:
	case err := <-served:
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return b.Shutdown(ctx)
}
