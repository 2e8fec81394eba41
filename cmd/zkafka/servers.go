package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/internal/gctune"
	"github.com/zkafka/zkafka/quorum"
)

// runCommand is `zkafka run`: ZooKeeper and one broker, no configuration.
func runCommand() *cobra.Command {
	var lf logFlags
	var dataDir, zkAddr, kafkaAddr, control string
	var brokers int
	cmd := &cobra.Command{
		Use:   "run [flags]",
		Short: "start ZooKeeper and one Kafka broker in one process, no configuration needed",
		Long: `Starts a standalone ZooKeeper server on 127.0.0.1:2181 and one Kafka broker on
127.0.0.1:9092 in one process, with data under ./zkafka-data. No configuration
is needed. With --brokers N, N brokers (broker.id 0..N-1) form a cluster on
ports 9092, 9093, ..., each with its own data directory (kafka-<id>).

With --control host:port, the cluster runs as package zkafkatest runs it in
Go tests (test settings: tickTime 200 ms, every member behind an in-process
proxy, data under zookeeper-1 and kafka-<id>) and an HTTP JSON API on that
address injects faults: kill, restart, pause, cut, intercepted requests,
session expiry (see README, "Testing your own client against zkafka").`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if control != "" {
				return exitWith(cmdRunControlled(lf.logger(cmd.ErrOrStderr()), cmd.ErrOrStderr(), dataDir, zkAddr, kafkaAddr, control, brokers))
			}
			return exitWith(cmdRun(lf.logger(cmd.ErrOrStderr()), cmd.ErrOrStderr(), dataDir, zkAddr, kafkaAddr, brokers))
		},
	}
	cmd.Flags().StringVar(&dataDir, "data", "zkafka-data", "data directory")
	cmd.Flags().StringVar(&zkAddr, "zookeeper-addr", "127.0.0.1:2181", "ZooKeeper client address")
	cmd.Flags().StringVar(&kafkaAddr, "kafka-addr", "127.0.0.1:9092", "Kafka listener address (of broker 0; broker i listens on its port + i)")
	cmd.Flags().IntVar(&brokers, "brokers", 1, "number of Kafka brokers")
	cmd.Flags().StringVar(&control, "control", "", "serve the fault-injection HTTP API on this address (host:port)")
	lf.register(cmd.Flags())
	return cmd
}

// zookeeperCommand is `zkafka zookeeper zoo.cfg`.
func zookeeperCommand() *cobra.Command {
	var lf logFlags
	cmd := &cobra.Command{
		Use:   "zookeeper [flags] zoo.cfg",
		Short: "start a ZooKeeper server from a zoo.cfg",
		Long: `Starts a ZooKeeper server configured by a standard zoo.cfg (tickTime, dataDir,
clientPort, server.N lines for an ensemble, ...) and the myid file in dataDir.`,
		Args: oneArg("zoo.cfg"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitWith(cmdZookeeper(lf.logger(cmd.ErrOrStderr()), cmd.ErrOrStderr(), args[0]))
		},
	}
	lf.register(cmd.Flags())
	return cmd
}

// brokerCommand is `zkafka broker server.properties`.
func brokerCommand() *cobra.Command {
	var lf logFlags
	cmd := &cobra.Command{
		Use:   "broker [flags] server.properties",
		Short: "start a Kafka broker from a server.properties",
		Long: `Starts a Kafka broker configured by a standard server.properties (broker.id,
listeners, log.dirs, zookeeper.connect, ...).`,
		Args: oneArg("server.properties"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitWith(cmdBroker(lf.logger(cmd.ErrOrStderr()), cmd.ErrOrStderr(), args[0]))
		},
	}
	lf.register(cmd.Flags())
	return cmd
}

// noArgs refuses positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) != 0 {
		return usageError{fmt.Errorf("unexpected argument %q", args[0])}
	}
	return nil
}

// oneArg wants exactly one positional argument, the file named what.
func oneArg(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageError{fmt.Errorf("want one argument, the %s; got %d", what, len(args))}
		}
		return nil
	}
}

func cmdRun(log *slog.Logger, stderr io.Writer, dataDir, zkAddr, kafkaAddr string, brokers int) int {
	cfg := quorum.DefaultConfig(filepath.Join(dataDir, "zookeeper"))
	host, port, err := splitHostPort(zkAddr)
	if err != nil {
		return configError(stderr, fmt.Errorf("-zookeeper-addr=%s: %v", zkAddr, err))
	}
	kafkaHost, kafkaPort, err := splitHostPort(kafkaAddr)
	if err != nil {
		return configError(stderr, fmt.Errorf("-kafka-addr=%s: %v", kafkaAddr, err))
	}
	if brokers < 1 || kafkaPort != 0 && kafkaPort+brokers-1 > 65535 {
		return configError(stderr, fmt.Errorf("-brokers=%d: must be at least 1, with ports up to 65535", brokers))
	}
	cfg.ClientPortAddress, cfg.ClientPort = host, port
	cfg.FourLetterWords = map[string]bool{"srvr": true, "ruok": true, "mntr": true, "stat": true}
	zk, err := quorum.Start(cfg, log.With("server", "zookeeper"))
	if err != nil {
		log.Error("zookeeper did not start", "err", err)
		return 1
	}
	stopGC := make(chan struct{})
	defer close(stopGC)
	go gctune.Run(stopGC)
	servers := []interface{ Shutdown(context.Context) error }{zk} // shut down in reverse
	failures := []<-chan error{zk.Failed()}
	for id := 0; id < brokers; id++ {
		dir, port := "kafka", kafkaPort
		if brokers > 1 {
			dir = "kafka-" + strconv.Itoa(id)
			if port != 0 {
				port += id
			}
		}
		bcfg := broker.DefaultConfig(filepath.Join(dataDir, dir))
		bcfg.BrokerID = int32(id)
		bcfg.ZooKeeperConnect = zk.Addr().String()
		bcfg.Listeners = []string{"PLAINTEXT://" + net.JoinHostPort(kafkaHost, strconv.Itoa(port))}
		b, failed := startBroker(bcfg, log.With("server", "kafka"))
		if b == nil {
			shutdown(log, reversed(servers)...)
			return 1
		}
		servers, failures = append(servers, b), append(failures, failed)
	}
	if !waitForSignalOr(log, failures...) {
		shutdown(log, reversed(servers)...)
		return 1
	}
	return shutdown(log, reversed(servers)...)
}

// reversed returns s in reverse order (servers shut down in the reverse of
// their start).
func reversed[T any](s []T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// startBroker creates a broker and serves its first listener in the
// background; failed yields the error if serving stops on its own.
func startBroker(cfg broker.Config, log *slog.Logger) (*broker.Broker, <-chan error) {
	b, err := broker.New(cfg, log)
	if err != nil {
		log.Error("kafka broker did not start", "err", err)
		return nil, nil
	}
	failed := make(chan error, 1)
	go func() {
		if err := b.ListenAndServe(); err != nil && !errors.Is(err, broker.ErrServerClosed) {
			log.Error("kafka broker stopped", "err", err)
			failed <- err
		}
	}()
	log.Info("kafka broker started", "listeners", cfg.Listeners, "zookeeper", cfg.ZooKeeperConnect)
	return b, failed
}

func cmdZookeeper(log *slog.Logger, stderr io.Writer, zooCfg string) int {
	cfg, err := quorum.LoadConfig(zooCfg, log)
	if err != nil {
		return configError(stderr, err)
	}
	zk, err := quorum.Start(cfg, log)
	if err != nil {
		log.Error("zookeeper did not start", "err", err)
		return 1
	}
	stopGC := make(chan struct{})
	defer close(stopGC)
	go gctune.Run(stopGC) // the tree is most of the heap: bound the GC's headroom
	if !waitForSignalOr(log, zk.Failed()) {
		shutdown(log, zk)
		return 1
	}
	return shutdown(log, zk)
}

func cmdBroker(log *slog.Logger, stderr io.Writer, serverProperties string) int {
	cfg, err := broker.LoadConfig(serverProperties, log)
	if err != nil {
		return configError(stderr, err)
	}
	b, failed := startBroker(cfg, log)
	if b == nil {
		return 1
	}
	if !waitForSignalOr(log, failed) {
		shutdown(log, b)
		return 1
	}
	return shutdown(log, b)
}

// waitForSignalOr blocks until SIGINT or SIGTERM (true) or until one of
// failed yields: a server stopped on its own (a listener that cannot
// accept, a replicated log that cannot be written), which it logs (false).
func waitForSignalOr(log *slog.Logger, failed ...<-chan error) bool {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(ch)
	stop := make(chan struct{})
	defer close(stop)
	failure := make(chan error, len(failed))
	for _, f := range failed {
		go func() {
			select {
			case err := <-f:
				failure <- err
			case <-stop:
			}
		}()
	}
	select {
	case sig := <-ch:
		log.Info("shutting down", "signal", sig.String())
		return true
	case err := <-failure:
		log.Error("a server failed; exiting", "err", err)
		return false
	}
}

// shutdown stops the servers, bounded in time.
func shutdown(log *slog.Logger, servers ...interface{ Shutdown(context.Context) error }) int {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	code := 0
	for _, s := range servers {
		if err := s.Shutdown(ctx); err != nil {
			log.Error("shutdown", "err", err)
			code = 1
		}
	}
	return code
}

func splitHostPort(addr string) (string, int, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("the port must be an integer from 0 to 65535")
	}
	return host, port, nil
}
