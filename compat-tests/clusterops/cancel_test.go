package clusterops

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// TestReassignWaitsAndCancels: broker 4 is registered but the controller
// cannot reach it (its inter-broker listener speaks TLS), so it never
// follows. A move of c-0 from [1 2 3] to [2 3 4] therefore stays in
// progress — ListPartitionReassignments shows replicas [2 3 4 1], adding
// [4], removing [1], and broker 1 keeps its replica — until it is
// cancelled (null replicas): then the assignment is brokers 1, 2, 3 again
// (as [2 3 1], the order Kafka's cancel leaves) with nothing in progress.
func TestReassignWaitsAndCancels(t *testing.T) {
	dir := t.TempDir()
	pki := keystoretest.NewPKI(t, "test CA")
	p12 := keystoretest.WritePKCS12(t, dir, "server.p12", "changeit", pki.Server, pki.CA)
	started := 0
	cl := kafkaenv.StartCluster(t, 4, fast(0), kafkaenv.Configure(func(c *broker.Config) {
		started++ // brokers 1..4 in turn
		c.Listeners = []string{"PLAINTEXT://127.0.0.1:0", "INTERNAL://127.0.0.1:0"}
		c.ListenerProtocols = map[string]string{"PLAINTEXT": "PLAINTEXT", "INTERNAL": "PLAINTEXT"}
		c.InterBroker.ListenerName = "INTERNAL"
		if started == 4 {
			c.ListenerProtocols["INTERNAL"] = "SSL"
			c.SSL.KeystoreType, c.SSL.KeystoreLocation, c.SSL.KeystorePassword = "PKCS12", p12, "changeit"
		}
	}), kafkaenv.Unreachable(func(c *broker.Config) bool { return c.ListenerProtocols["INTERNAL"] == "SSL" }))
	createAssigned(t, cl, "c", [][]int32{{1, 2, 3}})
	z := cl.Brokers[0].ZK()
	waitStates(t, cl, z, "c", 1, "all in the ISR", allInISR(3))

	adm := kadm.NewClient(client(t, cl))
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("c", 0, []int32{2, 3, 4})
	if rs, err := adm.AlterPartitionAssignments(ctxT(t), req); err != nil || rs.Error() != nil {
		t.Fatalf("AlterPartitionAssignments: %v %v", err, rs.Error())
	}
	time.Sleep(500 * time.Millisecond) // time enough to complete, if it could
	set := kadm.TopicsSet{}
	set.Add("c", 0)
	ls, err := adm.ListPartitionReassignments(ctxT(t), set)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := ls["c"][0]
	if !ok || !slices.Equal(r.Replicas, []int32{2, 3, 4, 1}) || !slices.Equal(r.AddingReplicas, []int32{4}) || !slices.Equal(r.RemovingReplicas, []int32{1}) {
		t.Fatalf("move in progress: %+v (listed %v), want replicas [2 3 4 1] adding [4] removing [1]", r, ok)
	}
	all, err := kmsg.NewPtrListPartitionReassignmentsRequest().RequestWith(ctxT(t), client(t, cl)) // topics null: all
	if err != nil || all.ErrorCode != 0 || len(all.Topics) != 1 || all.Topics[0].Topic != "c" || len(all.Topics[0].Partitions) != 1 {
		t.Fatalf("ListPartitionReassignments of all partitions: %+v %v", all, err)
	}
	if s, _ := readState(t, cl, z, "c", 0); slices.Contains(s.ISR, 4) {
		t.Fatalf("broker 4 in the ISR: %+v", s)
	}

	var cancel kadm.AlterPartitionAssignmentsReq
	cancel.CancelAssign("c", 0)
	if rs, err := adm.AlterPartitionAssignments(ctxT(t), cancel); err != nil || rs.Error() != nil {
		t.Fatalf("cancel: %v %v", err, rs.Error())
	}
	ls, err = adm.ListPartitionReassignments(ctxT(t), set)
	if err != nil || len(ls["c"]) != 0 {
		t.Fatalf("after the cancel: %v %v", ls, err)
	}
	// The original replicas, in RS order less the added ones ([2 3 1]):
	// Kafka's originReplicas keeps the set, not the order.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		td, err := adm.ListTopics(ctxT(t), "c") // the metadata follows UpdateMetadata
		if err == nil && slices.Equal(td["c"].Partitions[0].Replicas, []int32{2, 3, 1}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("assignment after the cancel: %v %v", td["c"].Partitions[0], err)
		}
	}
	waitStates(t, cl, z, "c", 1, "ISR {1,2,3}", allInISR(3))
}
