package clusterops

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestDeleteWhileAReplicaIsDown: "gone" has replicas on all three
// brokers; broker 3 is stopped, the topic deleted. The deletion waits for
// broker 3's replica: the DeleteTopics request times out, the topic znode
// and the /admin/delete_topics marker stay, and brokers 1 and 2 have
// deleted their data. When broker 3 starts again it is told to delete
// its replica, and then the deletion completes: the znodes are gone and
// no broker holds the topic's data.
func TestDeleteWhileAReplicaIsDown(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fast(0))
	createTopic(t, cl, "gone", 2, 3)
	z := cl.Brokers[0].ZK()
	waitStates(t, cl, z, "gone", 2, "all in the ISR", allInISR(3))
	p := client(t, cl, kgo.DefaultProduceTopic("gone"), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err := p.ProduceSync(ctxT(t), kgo.StringRecord("x"), kgo.StringRecord("y")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	dataDirs := func(id int32) []string {
		var out []string
		for part := range 2 {
			dir := filepath.Join(cl.Broker(id).Config.LogDirs[0], "gone-"+string(rune('0'+part)))
			if _, err := os.Stat(dir); err == nil {
				out = append(out, dir)
			}
		}
		return out
	}
	if len(dataDirs(3)) != 2 {
		t.Fatalf("broker 3 holds %v, want both partitions", dataDirs(3))
	}
	cl.Broker(3).Stop()

	adm := kadm.NewClient(client(t, cl))
	adm.SetTimeoutMillis(2000)
	rs, err := adm.DeleteTopics(ctxT(t), "gone")
	if err == nil && rs["gone"].Err == nil {
		t.Fatalf("DeleteTopics answered success while broker 3's replica is down")
	}
	t.Logf("DeleteTopics with broker 3 down: %v %v", err, rs["gone"].Err)
	for _, path := range []string{"/brokers/topics/gone", "/admin/delete_topics/gone"} {
		if ok, _, _ := z.Exists(cl.Brokers[0].Path(path)); !ok {
			t.Fatalf("%s is gone before broker 3's replica was deleted", path)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); len(dataDirs(1))+len(dataDirs(2)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("brokers 1 and 2 still hold %v %v", dataDirs(1), dataDirs(2))
		}
	}

	cl.Broker(3).Start()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		topic, _, _ := z.Exists(cl.Brokers[0].Path("/brokers/topics/gone"))
		marker, _, _ := z.Exists(cl.Brokers[0].Path("/admin/delete_topics/gone"))
		if !topic && !marker && len(dataDirs(3)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deletion never completed: topic znode %v, marker %v, broker 3 holds %v", topic, marker, dataDirs(3))
		}
	}
	td, err := adm.ListTopics(ctxT(t))
	if err != nil || td.Has("gone") {
		t.Fatalf("topics after the deletion: %v %v", td.Names(), err)
	}
}
