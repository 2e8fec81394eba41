package kafkaacl

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/compat-tests/internal/ktxn"
)

// TestTransactionalProduceAuthorized: a Produce with a transactional id
// needs WRITE on that TransactionalId (else every partition answers
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka's KafkaApis), besides
// WRITE on the topic; WriteTxnMarkers needs CLUSTER_ACTION (the brokers'
// and super users'), else CLUSTER_AUTHORIZATION_FAILED.
func TestTransactionalProduceAuthorized(t *testing.T) {
	p := newPKI(t)
	e := kafkaenv.Start(t, p.secured(func(c *broker.Config) { c.TxnPartitionVerification = false }))
	if _, err := p.admin(e, admin).CreateTopic(ctx(t), 1, 1, nil, "fin-txn"); err != nil {
		t.Fatal(err)
	}
	createACLs(t, p.as(e, admin),
		aclOf(topicT, "fin-", prefixed, alice, "*", kmsg.ACLOperationWrite, allowP),
		aclOf(kmsg.ACLResourceTypeTransactionalId, "tx-alice", literal, alice, "*", kmsg.ACLOperationWrite, allowP))
	ac := p.as(e, alice)
	pid, epoch, err := ktxn.InitPID(p.as(e, admin))
	if err != nil {
		t.Fatal(err)
	}
	var r kmsg.ProduceResponseTopicPartition
	waitFor(t, "alice's transactional id WRITE", func() bool {
		r, err = ktxn.Produce(ac, "tx-alice", "fin-txn", 0, ktxn.Batch(pid, epoch, 0, "ok"))
		return err == nil && r.ErrorCode == 0
	})
	if r, err = ktxn.Produce(ac, "tx-bob", "fin-txn", 0, ktxn.Batch(pid, epoch, 1, "no")); err != nil || r.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("another transactional id: %v %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", err, kerr.ErrorForCode(r.ErrorCode))
	}
	if code, err := ktxn.Marker(ac, "fin-txn", 0, pid, epoch, 0, true); err != nil || code != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice's WriteTxnMarkers: %v %v, want CLUSTER_AUTHORIZATION_FAILED", err, kerr.ErrorForCode(code))
	}
	if code, err := ktxn.Marker(p.as(e, admin), "fin-txn", 0, pid, epoch, 0, true); err != nil || code != 0 {
		t.Fatalf("a super user's WriteTxnMarkers: %v %v", err, kerr.ErrorForCode(code))
	}
}
