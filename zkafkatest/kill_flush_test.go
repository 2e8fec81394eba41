package zkafkatest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/zkafkatest"
)

// TestKillLosesUnflushedWrites: a broker killed with records acked
// (acks=1) but not yet fsynced (no flush.messages or flush.ms) comes back
// without them, as after a machine crash, and takes new writes at the
// offset its log ends; those of a topic with flush.messages=1, fsynced
// before their ack, all stay; stopped instead, it comes back with all of
// them.
func TestKillLosesUnflushedWrites(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.BrokerSessionTimeout(2*time.Second), zkafkatest.Topics(
		zkafkatest.TopicSpec{Name: "t", Partitions: 1, ReplicationFactor: 1},
		zkafkatest.TopicSpec{Name: "synced", Partitions: 1, ReplicationFactor: 1, Configs: map[string]string{"flush.messages": "1"}}))
	c := client(t, cl, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	for i := range 20 {
		produce(t, c, "t", fmt.Sprint("r", i))
	}
	must(t, cl.Stop(zkafkatest.Broker(1)))
	must(t, cl.StartMember(zkafkatest.Broker(1)))
	if end := endOffset(t, cl, "t"); end != 20 {
		t.Fatalf("after Stop and a restart the log ends at %d, want 20", end)
	}
	for i := 20; i < 40; i++ {
		produce(t, c, "t", fmt.Sprint("r", i))
		produce(t, c, "synced", fmt.Sprint("s", i))
	}
	must(t, cl.Kill(zkafkatest.Broker(1)))
	must(t, cl.StartMember(zkafkatest.Broker(1)))
	end := endOffset(t, cl, "t")
	if end >= 40 {
		t.Fatalf("after Kill and a restart the log ends at %d: the 20 unflushed records are all there", end)
	}
	if end < 20 {
		t.Fatalf("after Kill the log ends at %d: it lost records flushed by the clean stop", end)
	}
	if synced := endOffset(t, cl, "synced"); synced != 20 {
		t.Fatalf("after Kill the flush.messages=1 topic ends at %d, want 20", synced)
	}
	produce(t, c, "t", "after")
	if got := endOffset(t, cl, "t"); got != end+1 {
		t.Fatalf("a write after the restart: log end %d, want %d", got, end+1)
	}
}

// endOffset is partition 0's log end offset, waited for until the broker
// leads it again.
func endOffset(t *testing.T, cl *zkafkatest.Cluster, topic string) int64 {
	t.Helper()
	adm := kadm.NewClient(client(t, cl))
	var end int64
	must(t, poll(t, 30*time.Second, func() error {
		offs, err := adm.ListEndOffsets(ctx(t, 10*time.Second), topic)
		if err != nil {
			return err
		}
		o, ok := offs.Lookup(topic, 0)
		if !ok || o.Err != nil {
			return fmt.Errorf("no end offset: %v", o.Err)
		}
		end = o.Offset
		return nil
	}))
	return end
}
