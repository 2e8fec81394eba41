package kafkatool

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestZKConsumerGroupThroughBroker: a group coordinated through ZooKeeper
// (its offsets in /consumers/zg/offsets, the broker's store of record)
// is inspectable through the broker: OffsetFetch (kadm) and `groups
// describe` without --zookeeper show the ZooKeeper consumer's latest
// commits and the lag they leave, also after the broker has loaded the
// group once (while nobody is a member at the broker, it must not serve
// the offsets it loaded then).
func TestZKConsumerGroupThroughBroker(t *testing.T) {
	e := startEnv(t)
	run(t, "", "topics", "create", "zt", "--partitions", "6", "--bootstrap-server", e.Addr)
	produceEach(t, e, "zt", "a", 2)
	m := startZKMember(t, kafkaenv.ZooKeeper(), e.Chroot, "zt")
	z := e.ZK()
	ctx := kafkaenv.Context(t, 60*time.Second)
	adm := e.Admin()
	// zkCommitted reads what the ZooKeeper consumer committed.
	zkCommitted := func() map[int32]int64 {
		out := map[int32]int64{}
		for p := int32(0); p < 6; p++ {
			data, _, err := z.Get(e.Path("/consumers/zg/offsets/zt/" + strconv.Itoa(int(p))))
			if err != nil {
				continue
			}
			n, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
			out[p] = n
		}
		return out
	}
	allAt := func(want int64) bool {
		c := zkCommitted()
		for p := int32(0); p < 6; p++ {
			if c[p] != want {
				return false
			}
		}
		return true
	}
	checkFor(t, 30*time.Second, "the ZooKeeper consumer committed 2 on every partition", func() bool { return allAt(2) })
	// The broker loads the group now.
	brokerAt := func(want int64) bool {
		os, err := adm.FetchOffsets(ctx, "zg")
		if err != nil {
			return false
		}
		for p := int32(0); p < 6; p++ {
			o, ok := os.Lookup("zt", p)
			if !ok || o.Err != nil || o.At != want {
				return false
			}
		}
		return true
	}
	checkFor(t, 10*time.Second, "kadm FetchOffsets shows the first commits", func() bool { return brokerAt(2) })
	// More records; the ZooKeeper consumer reads and commits them.
	produceEach(t, e, "zt", "b", 3)
	checkFor(t, 30*time.Second, "the ZooKeeper consumer committed 5 on every partition", func() bool { return allAt(5) })
	if !brokerAt(5) {
		os, _ := adm.FetchOffsets(ctx, "zg")
		t.Fatalf("kadm FetchOffsets through the broker after new ZooKeeper commits: %+v", os)
	}
	// ListGroups lists it: ZooKeeper is the broker's store of committed
	// offsets, as __consumer_offsets is Kafka's.
	if out := run(t, "", "groups", "list", "--bootstrap-server", e.Addr); !strings.Contains(out, "zg") {
		t.Errorf("groups list:\n%s", out)
	}
	// groups describe through the broker (no --zookeeper): offsets and lag.
	type desc struct {
		TotalLag   int64 `json:"total_lag"`
		Partitions []struct {
			Partition int32 `json:"partition"`
			Committed int64 `json:"committed"`
			End       int64 `json:"end"`
			Lag       int64 `json:"lag"`
		} `json:"partitions"`
	}
	d := decode[[]desc](t, run(t, "", "groups", "describe", "zg", "--bootstrap-server", e.Addr, "-o", "json"))
	if len(d) != 1 || len(d[0].Partitions) != 6 || d[0].TotalLag != 0 {
		t.Fatalf("groups describe zg: %+v", d)
	}
	for _, p := range d[0].Partitions {
		if p.Committed != 5 || p.End != 5 || p.Lag != 0 {
			t.Errorf("groups describe zg partition %d: %+v", p.Partition, p)
		}
	}
	// Stop the consumer, produce more: the lag shows through the broker.
	m.cancel()
	checkFor(t, 15*time.Second, "the ZooKeeper consumer left", func() bool { return len(members(z, e)) == 0 })
	produceEach(t, e, "zt", "c", 1)
	d = decode[[]desc](t, run(t, "", "groups", "describe", "zg", "--bootstrap-server", e.Addr, "-o", "json"))
	if len(d) != 1 || d[0].TotalLag != 6 {
		t.Errorf("groups describe zg after 6 more records: %+v", d)
	}
}
