package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/zkafka/zkafka/zkafkatest"
)

// cmdRunControlled is `zkafka run --control addr`: the cluster of
// package zkafkatest (brokers 0..n-1, ZooKeeper and brokers behind their
// links, at the usual addresses) and its HTTP fault API on addr.
func cmdRunControlled(log *slog.Logger, stderr io.Writer, dataDir, zkAddr, kafkaAddr, control string, brokers int) int {
	if brokers < 1 {
		return configError(stderr, fmt.Errorf("-brokers=%d: must be at least 1", brokers))
	}
	l, err := net.Listen("tcp", control)
	if err != nil {
		return configError(stderr, fmt.Errorf("-control=%s: %v", control, err))
	}
	cl, err := zkafkatest.Start(zkafkatest.DataDir(dataDir), zkafkatest.ZooKeeperAddr(zkAddr),
		zkafkatest.KafkaAddr(kafkaAddr), zkafkatest.Brokers(brokers), zkafkatest.FirstBrokerID(0),
		zkafkatest.Logger(log))
	if err != nil {
		l.Close()
		log.Error("the cluster did not start", "err", err)
		return 1
	}
	srv := &http.Server{Handler: zkafkatest.ControlHandler(cl), ReadHeaderTimeout: 10 * time.Second}
	failed := make(chan error, 1)
	go func() {
		if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			failed <- err
		}
	}()
	log.Info("cluster started", "zookeeper", cl.ZooKeeper(), "bootstrap", cl.Bootstrap(), "control", "http://"+l.Addr().String())
	ok := waitForSignalOr(log, failed)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	if err := cl.Close(); err != nil {
		log.Error("shutdown", "err", err)
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}
