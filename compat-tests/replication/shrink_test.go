package replication

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// TestLeaderShrinksISROfAFollowerThatCannotFetch: broker 3 stays
// registered but cannot fetch (its inter-broker listener is SSL, the
// others' PLAINTEXT, so its TLS fetches fail, and the controller's
// requests to it fail too: it never learns it follows). Its leader takes it out of
// the ISR after replica.lag.time.max.ms through AlterPartition (the leader
// epoch stays: the controller did not see a broker die), and an acks=all
// write that waited for it proceeds.
func TestLeaderShrinksISROfAFollowerThatCannotFetch(t *testing.T) {
	dir := t.TempDir()
	p := keystoretest.NewPKI(t, "test CA")
	p12 := keystoretest.WritePKCS12(t, dir, "server.p12", "changeit", p.Server, p.CA)
	started := 0
	cl := kafkaenv.StartCluster(t, 3, fastReplication(time.Second), kafkaenv.Configure(func(c *broker.Config) {
		started++ // StartCluster starts brokers 1, 2, 3 in turn
		c.Listeners = []string{"PLAINTEXT://127.0.0.1:0", "INTERNAL://127.0.0.1:0"}
		c.ListenerProtocols = map[string]string{"PLAINTEXT": "PLAINTEXT", "INTERNAL": "PLAINTEXT"}
		c.InterBroker.ListenerName = "INTERNAL"
		if started == 3 {
			c.ListenerProtocols["INTERNAL"] = "SSL"
			c.SSL.KeystoreType, c.SSL.KeystoreLocation, c.SSL.KeystorePassword = "PKCS12", p12, "changeit"
		}
	}), kafkaenv.Unreachable(func(c *broker.Config) bool { return c.ListenerProtocols["INTERNAL"] == "SSL" }))
	c := client(t, cl, kgo.DefaultProduceTopic("sh"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite())
	ctx := ctxT(t)
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "sh", -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{1, 2, 3}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 10000
	if resp, err := req.RequestWith(ctx, c); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %+v %v", resp, err)
	}
	z := cl.Brokers[0].ZK()
	s0 := waitState(t, cl, z, "sh", 0, "created with every live replica", isrIs(1, 2, 3))
	start := time.Now()
	if err := c.ProduceSync(ctx, kgo.StringRecord("x")).FirstErr(); err != nil {
		t.Fatalf("acks=all: %v", err)
	}
	s := waitState(t, cl, z, "sh", 0, "without broker 3", isrIs(1, 2))
	if s.Leader != 1 || s.LeaderEpoch != s0.LeaderEpoch {
		t.Fatalf("state %+v: want leader 1 and epoch %d (an AlterPartition shrink)", s, s0.LeaderEpoch)
	}
	if ids, _, err := z.Children(cl.Brokers[0].Path("/brokers/ids")); err != nil || len(ids) != 3 {
		t.Fatalf("/brokers/ids %v %v: broker 3 should still be registered", ids, err)
	}
	t.Logf("acks=all answered after %v (replica.lag.time.max.ms 1000)", time.Since(start).Round(10*time.Millisecond))
}
