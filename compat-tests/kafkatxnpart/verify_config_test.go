package kafkatxnpart

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestVerificationDynamicSwitch: with transaction.partition.verification.enable
// on (the default) and no transaction coordinator to ask (no
// __transaction_state yet), a batch that would open a transaction is
// refused with the retriable NOT_ENOUGH_REPLICAS and nothing is appended;
// turned off as a dynamic cluster default (IncrementalAlterConfigs, as
// Kafka's dynamic config), the same batch is appended, and
// DescribeConfigs names the dynamic value.
func TestVerificationDynamicSwitch(t *testing.T) {
	e := kafkaenv.Start(t)
	adm := e.Admin()
	if _, err := adm.CreateTopic(ctxT(t), 1, 1, nil, "vs"); err != nil {
		t.Fatal(err)
	}
	cl := clientish{direct(t, e.Addr)}
	waitLedClient(t, cl, "vs")
	pid, epoch := initPID(t, cl.c)
	if r := produceTxn(t, cl.c, "vs-txn", "vs", 0, txnBatch(pid, epoch, 0, "x")); r.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("unverifiable: %v, want NOT_ENOUGH_REPLICAS", kerr.ErrorForCode(r.ErrorCode))
	}
	if end := latest(t, cl.c, "vs", 0, 0); end != 0 {
		t.Fatalf("log end %d after a refused batch", end)
	}
	if rs, err := adm.AlterBrokerConfigs(ctxT(t), []kadm.AlterConfig{{Name: "transaction.partition.verification.enable", Value: kadm.StringPtr("false")}}); err != nil || rs[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r := produceTxn(t, cl.c, "vs-txn", "vs", 0, txnBatch(pid, epoch, 0, "x"))
		if r.ErrorCode == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still refused after the dynamic change: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	rc, err := adm.DescribeBrokerConfigs(ctxT(t), e.Config.BrokerID)
	if err != nil {
		t.Fatal(err)
	}
	v, err := rc.On(rc[0].Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range v.Configs {
		if c.Key == "transaction.partition.verification.enable" {
			if c.MaybeValue() != "false" || c.Source.String() != "DYNAMIC_DEFAULT_BROKER_CONFIG" {
				t.Fatalf("described %q from %v", c.MaybeValue(), c.Source)
			}
			return
		}
	}
	t.Fatal("transaction.partition.verification.enable not described")
}
