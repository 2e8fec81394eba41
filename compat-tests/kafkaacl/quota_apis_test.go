package kafkaacl

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClientQuotaAPIsAuthorized: DescribeClientQuotas needs
// DESCRIBE_CONFIGS on the cluster (top-level CLUSTER_AUTHORIZATION_FAILED),
// AlterClientQuotas ALTER_CONFIGS (each entry refused), as Kafka 3.7's
// KafkaApis checks them; ALTER_CONFIGS implies DESCRIBE_CONFIGS.
func TestClientQuotaAPIsAuthorized(t *testing.T) {
	m := newMatrix(t)
	describe := func(who string) int16 {
		return on[*kmsg.DescribeClientQuotasResponse](t, m.client(who), 1, kmsg.NewPtrDescribeClientQuotasRequest()).ErrorCode
	}
	alter := func(who string) int16 {
		req := kmsg.NewPtrAlterClientQuotasRequest()
		e := kmsg.NewAlterClientQuotasRequestEntry()
		ent := kmsg.NewAlterClientQuotasRequestEntryEntity()
		ent.Type = "client-id" // the default client id
		e.Entity = append(e.Entity, ent)
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		op.Key, op.Value = "producer_byte_rate", 1<<30
		e.Ops = append(e.Ops, op)
		req.Entries = append(req.Entries, e)
		return on[*kmsg.AlterClientQuotasResponse](t, m.client(who), 1, req).Entries[0].ErrorCode
	}
	denied := kerr.ClusterAuthorizationFailed.Code
	for _, c := range []struct {
		what      string
		got, want int16
	}{
		{"DescribeClientQuotas by alice", describe(alice), denied},
		{"DescribeClientQuotas by admin", describe(admin), 0},
		{"AlterClientQuotas by alice", alter(alice), denied},
		{"AlterClientQuotas by admin", alter(admin), 0},
	} {
		if c.got != c.want {
			t.Errorf("%s: code %d, want %d", c.what, c.got, c.want)
		}
	}
	createACLs(t, m.client(admin), aclOf(clusterT, "kafka-cluster", literal, bob, "*", kmsg.ACLOperationAlterConfigs, allowP))
	deadline := time.Now().Add(30 * time.Second)
	for describe(bob) != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := describe(bob); got != 0 {
		t.Errorf("DescribeClientQuotas by bob (ALTER_CONFIGS): code %d", got)
	}
	if got := alter(bob); got != 0 {
		t.Errorf("AlterClientQuotas by bob (ALTER_CONFIGS): code %d", got)
	}
}
