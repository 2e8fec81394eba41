package kafkaacl

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestTransactionalIDACLs: the transaction APIs check TRANSACTIONAL_ID
// as Kafka's KafkaApis does. Alice may WRITE transactional id tx-alice
// and topic tx-t; Bob has no ACL. FindCoordinator key type 1 needs
// DESCRIBE on the id, InitProducerId, AddPartitionsToTxn and EndTxn
// WRITE, DescribeTransactions DESCRIBE (ListTransactions leaves the
// others out); AddPartitionsToTxn also WRITE on each topic; its v4+
// broker form needs CLUSTER_ACTION.
func TestTransactionalIDACLs(t *testing.T) {
	p := newPKI(t)
	cl := kafkaenv.StartCluster(t, 1, p.secured(func(c *broker.Config) {
		c.Txn.StateLogPartitions, c.Groups.OffsetsTopicPartitions = 1, 1
	}))
	adm := p.admin(cl.Broker(1), admin)
	if _, err := adm.CreateTopic(ctx(t), 1, 1, nil, "tx-t"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx(t), 1, 1, nil, "tx-secret"); err != nil {
		t.Fatal(err)
	}
	txnT := kmsg.ACLResourceTypeTransactionalId
	createACLs(t, p.as(cl.Broker(1), admin),
		aclOf(txnT, "tx-alice", literal, alice, "*", kmsg.ACLOperationWrite, allowP),
		aclOf(topicT, "tx-t", literal, alice, "*", kmsg.ACLOperationWrite, allowP))
	waitFor(t, "broker's ACL cache", func() bool {
		return len(on[*kmsg.DescribeACLsResponse](t, p.as(cl.Broker(1), admin), 1, anyFilter()).Resources) == 2
	})
	as := func(who string) *kgo.Client { return p.as(cl.Broker(1), who) }
	fc := func(who, id string) int16 {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = 1, id, []string{id}
		r := on[*kmsg.FindCoordinatorResponse](t, as(who), 1, req)
		if r.Version >= 4 {
			return r.Coordinators[0].ErrorCode
		}
		return r.ErrorCode
	}
	waitFor(t, "__transaction_state", func() bool { return fc(alice, "tx-alice") == 0 })
	if c := fc(bob, "tx-alice"); c != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("Bob's FindCoordinator of tx-alice: %v", kerr.ErrorForCode(c))
	}
	init := func(who, id string) *kmsg.InitProducerIDResponse {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(id), 30000
		var r *kmsg.InitProducerIDResponse
		waitFor(t, "InitProducerId answered", func() bool {
			r = on[*kmsg.InitProducerIDResponse](t, as(who), 1, req)
			return r.ErrorCode != kerr.CoordinatorLoadInProgress.Code && r.ErrorCode != kerr.ConcurrentTransactions.Code
		})
		return r
	}
	if r := init(bob, "tx-alice"); r.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("Bob's InitProducerId of tx-alice: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := init(alice, "tx-other"); r.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("Alice's InitProducerId of tx-other: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	r := init(alice, "tx-alice")
	if r.ErrorCode != 0 {
		t.Fatalf("Alice's InitProducerId of tx-alice: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	add := func(who, topic string) int16 {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = "tx-alice", r.ProducerID, r.ProducerEpoch
		req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: topic, Partitions: []int32{0}}}
		req.SetVersion(3)
		return on[*kmsg.AddPartitionsToTxnResponse](t, as(who), 1, pinned{req}).Topics[0].Partitions[0].ErrorCode
	}
	if c := add(alice, "tx-secret"); c != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("Alice's AddPartitionsToTxn of tx-secret: %v", kerr.ErrorForCode(c))
	}
	if c := add(bob, "tx-t"); c != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("Bob's AddPartitionsToTxn to tx-alice: %v", kerr.ErrorForCode(c))
	}
	if c := add(alice, "tx-t"); c != 0 {
		t.Errorf("Alice's AddPartitionsToTxn of tx-t: %v", kerr.ErrorForCode(c))
	}
	verify := kmsg.NewPtrAddPartitionsToTxnRequest()
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = "tx-alice", r.ProducerID, r.ProducerEpoch, true
	tx.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "tx-t", Partitions: []int32{0}}}
	verify.Transactions = append(verify.Transactions, tx)
	verify.SetVersion(4)
	if vr := on[*kmsg.AddPartitionsToTxnResponse](t, as(alice), 1, pinned{verify}); vr.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("Alice's verify-only AddPartitionsToTxn v4: %v", kerr.ErrorForCode(vr.ErrorCode))
	}
	describe := func(who string) int16 {
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = []string{"tx-alice"}
		return on[*kmsg.DescribeTransactionsResponse](t, as(who), 1, req).TransactionStates[0].ErrorCode
	}
	if c := describe(bob); c != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("Bob's DescribeTransactions of tx-alice: %v", kerr.ErrorForCode(c))
	}
	if c := describe(alice); c != 0 {
		t.Errorf("Alice's DescribeTransactions of tx-alice: %v", kerr.ErrorForCode(c))
	}
	list := func(who string) int {
		return len(on[*kmsg.ListTransactionsResponse](t, as(who), 1, kmsg.NewPtrListTransactionsRequest()).TransactionStates)
	}
	if n, m := list(alice), list(bob); n != 1 || m != 0 {
		t.Errorf("ListTransactions: Alice sees %d, Bob %d; want 1 and 0", n, m)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "tx-alice", r.ProducerID, r.ProducerEpoch, false
	if c := on[*kmsg.EndTxnResponse](t, as(bob), 1, end).ErrorCode; c != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("Bob's EndTxn of tx-alice: %v", kerr.ErrorForCode(c))
	}
	if c := on[*kmsg.EndTxnResponse](t, as(alice), 1, end).ErrorCode; c != 0 {
		t.Errorf("Alice's EndTxn: %v", kerr.ErrorForCode(c))
	}
}

// pinned keeps a request at the version set on it.
type pinned struct{ kmsg.Request }

func (p pinned) MaxVersion() int16 { return p.GetVersion() }
