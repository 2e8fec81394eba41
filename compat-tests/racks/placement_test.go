package racks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// rackOf is the rack of each broker of TestRackAwarePlacement.
var rackOf = map[int32]string{1: "a", 2: "a", 3: "b", 4: "b"}

// crossRacks reports whether a partition has a replica in each of racks
// a and b (RF 2 on two racks of two brokers each). Kafka's rack-unaware
// placement cannot give that to 8 partitions of 4 brokers whatever its
// random start: its follower shift moves by one after 4 partitions, and
// only one shift in three pairs brokers 1,2 and 3,4 apart.
func crossRacks(pd kadm.PartitionDetail) bool {
	return len(pd.Replicas) == 2 && rackOf[pd.Replicas[0]] != rackOf[pd.Replicas[1]]
}

// TestRackAwarePlacement: four brokers in racks a,a,b,b register their
// rack as Kafka does (/brokers/ids version 5 with "rack"), Metadata and
// DescribeCluster answer it, and CreateTopics, CreatePartitions and
// auto-creation place every partition's two replicas on both racks. A
// fifth broker without a rack makes the placement fail with Kafka's
// errors.
func TestRackAwarePlacement(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 4, withRacks("a", "a", "b", "b"), kafkaenv.Configure(func(c *broker.Config) {
		c.NumPartitions, c.DefaultReplicationFactor = 8, 2
	}))
	z := cl.Brokers[0].ZK()
	data, _, err := z.Get(cl.Brokers[0].Path("/brokers/ids/3"))
	var reg map[string]any
	if err != nil || json.Unmarshal(data, &reg) != nil || reg["rack"] != "b" || reg["version"] != 5.0 || reg["features"] == nil {
		t.Fatalf("/brokers/ids/3: %s %v", data, err)
	}

	adm := kadm.NewClient(client(t, cl))
	bs, err := adm.ListBrokers(ctxT(t))
	if err != nil || len(bs) != 4 {
		t.Fatalf("brokers: %v %v", bs, err)
	}
	for _, b := range bs {
		if b.Rack == nil || *b.Rack != rackOf[b.NodeID] {
			t.Errorf("Metadata: broker %d rack %v", b.NodeID, b.Rack)
		}
	}
	dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctxT(t), client(t, cl))
	if err != nil || len(dc.Brokers) != 4 {
		t.Fatalf("DescribeCluster: %+v %v", dc, err)
	}
	for _, b := range dc.Brokers {
		if b.Rack == nil || *b.Rack != rackOf[b.NodeID] {
			t.Errorf("DescribeCluster: broker %d rack %v", b.NodeID, b.Rack)
		}
	}

	rcs, err := adm.DescribeBrokerConfigs(ctxT(t), 3)
	if v, src := source(t, rcs, "3", "broker.rack"); err != nil || v != "b" || src != kmsg.ConfigSourceStaticBrokerConfig {
		t.Errorf("DescribeConfigs of broker 3: broker.rack %q %v %v", v, src, err)
	}

	if r, err := adm.CreateTopic(ctxT(t), 8, 2, nil, "placed"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	waitTopic(t, cl, "placed", 8, crossRacks)
	if rs, err := adm.CreatePartitions(ctxT(t), 4, "placed"); err != nil || rs.Error() != nil {
		t.Fatalf("CreatePartitions: %v %v", err, rs.Error())
	}
	waitTopic(t, cl, "placed", 12, crossRacks)

	auto := client(t, cl, kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic("auto-placed"))
	if err := auto.ProduceSync(ctxT(t), &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("produce to an auto-created topic: %v", err)
	}
	waitTopic(t, cl, "auto-placed", 8, crossRacks)

	// A broker without a rack: Kafka's AdminOperationException, as
	// UNKNOWN_SERVER_ERROR with its message.
	kafkaenv.Start(t, kafkaenv.Chroot(cl.Brokers[0].Chroot), kafkaenv.Configure(func(c *broker.Config) { c.BrokerID = 5 }))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if bs, err := adm.ListBrokers(ctxT(t)); err == nil && len(bs) == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("broker 5 never listed")
		}
	}
	r, _ := adm.CreateTopic(ctxT(t), 3, 2, nil, "unplaced") // its error is r.Err
	if r.Err == nil || !strings.Contains(fmt.Sprint(r.Err), "UNKNOWN_SERVER_ERROR") ||
		r.ErrMessage != "Not all brokers have rack information for replica rack aware assignment." {
		t.Errorf("create with a broker without rack: %v %q", r.Err, r.ErrMessage)
	}
	rs, err := adm.CreatePartitions(ctxT(t), 1, "placed")
	if err != nil || len(rs) != 1 || !strings.Contains(fmt.Sprint(rs["placed"].Err), "UNKNOWN_SERVER_ERROR") ||
		!strings.HasPrefix(rs["placed"].ErrMessage, "Not all brokers have rack information. Add --disable-rack-aware") {
		t.Errorf("CreatePartitions with a broker without rack: %v %+v", err, rs)
	}
}
