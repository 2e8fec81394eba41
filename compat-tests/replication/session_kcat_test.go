//go:build compat

package replication

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestKcatConsumerOverFetchSessions: kcat (librdkafka) reads every record
// of a 30-partition RF 3 topic from brokers whose followers replicate in
// incremental fetch sessions; librdkafka's own fetches use a session or
// not as it chooses (the brokers' cached sessions are logged), and the
// answers it gets are right either way.
func TestKcatConsumerOverFetchSessions(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatal("kcat not installed (compat-tests/kafka-clients/compat-part.sh installs it)")
	}
	const parts, perPart = 30, 10
	cl := kafkaenv.StartCluster(t, 3, fastReplication(30*time.Second))
	createTopic(t, cl, "kcs", parts, 3, nil)
	p := client(t, cl, kgo.DefaultProduceTopic("kcs"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var want []string
	var rs []*kgo.Record
	for part := int32(0); part < parts; part++ {
		for i := 0; i < perPart; i++ {
			v := fmt.Sprintf("%d %d", part, i)
			rs = append(rs, &kgo.Record{Partition: part, Value: []byte(v)})
			want = append(want, v)
		}
	}
	if err := p.ProduceSync(ctxT(t), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", strings.Join(cl.Seeds(), ","), "-t", "kcs",
		"-o", "beginning", "-e", "-q", "-f", "%s\n").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("kcat read %d records, want %d: %q", len(got), len(want), got[:min(len(got), 10)])
	}
	for _, e := range cl.Brokers {
		s, ps := e.Broker().FetchSessions()
		t.Logf("broker %d: %d fetch sessions, %d partitions cached", e.Config.BrokerID, s, ps)
	}
}
