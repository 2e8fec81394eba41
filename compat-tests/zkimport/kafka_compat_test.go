//go:build compat

package zkimport

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// runBroker starts a broker on dir with its metadata in the ZooKeeper at
// zkAddr, and returns its address and a stop function.
func runBroker(t *testing.T, dir, zkAddr string) (string, func()) {
	cfg := broker.DefaultConfig(dir)
	cfg.Listeners = []string{"PLAINTEXT://127.0.0.1:0"}
	cfg.ZooKeeperConnect = zkAddr
	cfg.ZooKeeperSessionTimeout = 6 * time.Second
	b, err := broker.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- b.Serve(l) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Shutdown(ctx); err != nil {
			t.Errorf("broker shutdown: %v", err)
		}
		<-served
	}
	t.Cleanup(stop)
	return l.Addr().String(), stop
}

// TestKafkaMetadataSurvivesImport: a broker that ran on Apache ZooKeeper,
// restarted on zkafka's ZooKeeper after zk-import of Apache's data
// directory, serves its topic, its records and its group's committed
// offsets.
func TestKafkaMetadataSurvivesImport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	apache := zkserver.StartApache(t, zkserver.Options{})
	kdir := t.TempDir()
	addr, stop := runBroker(t, kdir, apache.Addr())
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("moved"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "moved"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		r := &kgo.Record{Partition: int32(i % 3), Value: []byte(fmt.Sprint("v", i))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	offs := kadm.Offsets{}
	for p := int32(0); p < 3; p++ {
		offs.Add(kadm.Offset{Topic: "moved", Partition: p, At: int64(3 + p), LeaderEpoch: -1})
	}
	if err := adm.CommitAllOffsets(ctx, "moved-group", offs); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	stop()
	apache.Stop()

	_, zk1 := zkafkaImport(t, filepath.Join(apache.Dir(), "data"), false)
	addr, _ = runBroker(t, kdir, zk1.Addr().String())
	cl, err = kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("moved"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm = kadm.NewClient(cl)
	// Metadata answers from the controller's UpdateMetadata, which follows
	// the broker's start (as Kafka's brokers answer until it arrives).
	var topics kadm.TopicDetails
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		topics, err = adm.ListTopics(ctx, "moved")
		if err == nil && topics["moved"].Err == nil && len(topics["moved"].Partitions) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic after the import: %+v, %v", topics, err)
		}
	}
	got, err := adm.FetchOffsets(ctx, "moved-group")
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 3; p++ {
		if o, ok := got.Lookup("moved", p); !ok || o.At != int64(3+p) {
			t.Errorf("committed offset of partition %d after the import: %+v", p, o)
		}
	}
	var values [][]byte
	for len(values) < 30 && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil && ctx.Err() == nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { values = append(values, r.Value) })
	}
	if len(values) != 30 || !bytes.HasPrefix(values[0], []byte("v")) {
		t.Fatalf("read %d records after the import", len(values))
	}
}
