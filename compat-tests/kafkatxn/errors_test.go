package kafkatxn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// api sends requests to one broker at a fixed version (-1: the newest
// both know).
type api struct {
	t  *testing.T
	kc *kgo.Client
	id int32
}

func (a api) send(req kmsg.Request, version int16) kmsg.Response {
	a.t.Helper()
	if version >= 0 {
		req.SetVersion(version)
	}
	var resp kmsg.Response
	var err error
	if version >= 0 {
		resp, err = a.kc.Broker(int(a.id)).RetriableRequest(ctxT(a.t), pinned{req})
	} else {
		resp, err = a.kc.Broker(int(a.id)).Request(ctxT(a.t), req)
	}
	if err != nil {
		a.t.Fatalf("%T: %v", req, err)
	}
	return resp
}

// pinned keeps a request at the version set on it (kgo otherwise picks
// the newest both sides know).
type pinned struct{ kmsg.Request }

func (p pinned) MaxVersion() int16 { return p.GetVersion() }

func (a api) init(id string, timeoutMs int32, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
	a.t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = kmsg.StringPtr(id), timeoutMs, pid, epoch
	return a.send(req, -1).(*kmsg.InitProducerIDResponse)
}

func (a api) add(id string, pid int64, epoch int16, version int16, topic string, parts ...int32) []kmsg.AddPartitionsToTxnResponseTopicPartition {
	a.t.Helper()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
	req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: topic, Partitions: parts}}
	resp := a.send(req, version).(*kmsg.AddPartitionsToTxnResponse)
	if len(resp.Topics) != 1 {
		a.t.Fatalf("AddPartitionsToTxn answered %d topics", len(resp.Topics))
	}
	return resp.Topics[0].Partitions
}

func (a api) end(id string, pid int64, epoch int16, commit bool, version int16) int16 {
	a.t.Helper()
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, commit
	return a.send(req, version).(*kmsg.EndTxnResponse).ErrorCode
}

func (a api) describe(id string) kmsg.DescribeTransactionsResponseTransactionState {
	a.t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	resp := a.send(req, -1).(*kmsg.DescribeTransactionsResponse)
	return resp.TransactionStates[0]
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	var w int16
	if want != nil {
		w = want.Code
	}
	if got != w {
		t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

// TestTxnAPIErrors drives the transaction APIs out of order and with the
// wrong producer, on one broker, and checks Kafka's answers.
func TestTxnAPIErrors(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 1, settings(), kafkaenv.Configure(func(c *broker.Config) {
		c.Txn.MaxTimeout = time.Minute
	}))
	kc := client(t, cl)
	createTopic(t, cl, kc, "t", 2, 1)
	const id = "errors-1"
	// The first FindCoordinator of a transactional id creates
	// __transaction_state and answers COORDINATOR_NOT_AVAILABLE meanwhile.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKey = 1, id
	if r := (api{t: t, kc: kc, id: 1}).send(fc, 3).(*kmsg.FindCoordinatorResponse); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Errorf("the first FindCoordinator key type 1: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	a := api{t: t, kc: kc, id: txnCoordinator(t, kc, id)}

	if r := a.init(id, 60001, -1, -1); r.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Errorf("InitProducerId over transaction.max.timeout.ms: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := a.init("", 1000, -1, -1); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("InitProducerId with an empty id: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := a.init(id, 1000, 5, -1); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("InitProducerId with a producer id and no epoch: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	r := a.init(id, 30000, -1, -1)
	wantCode(t, "InitProducerId", r.ErrorCode, nil)
	pid, epoch := r.ProducerID, r.ProducerEpoch
	if epoch != 0 {
		t.Errorf("first epoch %d, want 0", epoch)
	}
	// Out of order: no transaction is open.
	wantCode(t, "EndTxn with no transaction", a.end(id, pid, epoch, true, -1), kerr.InvalidTxnState)
	wantCode(t, "EndTxn of another producer id", a.end(id, pid+1, epoch, true, -1), kerr.InvalidProducerIDMapping)
	wantCode(t, "EndTxn of an unknown id", a.end("errors-unknown", pid, epoch, true, -1), kerr.InvalidProducerIDMapping)
	wantCode(t, "AddPartitionsToTxn v3 with a stale epoch", a.add(id, pid, epoch+1, 3, "t", 0)[0].ErrorCode, kerr.ProducerFenced)
	wantCode(t, "AddPartitionsToTxn v1 with a stale epoch", a.add(id, pid, epoch+1, 1, "t", 0)[0].ErrorCode, kerr.InvalidProducerEpoch)
	ps := a.add(id, pid, epoch, 3, "nope", 0)
	wantCode(t, "AddPartitionsToTxn of an unknown topic", ps[0].ErrorCode, kerr.UnknownTopicOrPartition)
	ps = a.add(id, pid, epoch, 3, "t", 0, 7)
	wantCode(t, "AddPartitionsToTxn partition 0 beside an unknown one", ps[0].ErrorCode, kerr.OperationNotAttempted)
	wantCode(t, "AddPartitionsToTxn of an unknown partition", ps[1].ErrorCode, kerr.UnknownTopicOrPartition)

	// TxnOffsetCommit for a group that was not added to the transaction.
	group := "errors-group"
	gc := api{t: t, kc: kc, id: coordinatorOf(t, kc, group)}
	wantCode(t, "AddPartitionsToTxn", a.add(id, pid, epoch, 3, "t", 0)[0].ErrorCode, nil)
	toc := kmsg.NewPtrTxnOffsetCommitRequest()
	toc.TransactionalID, toc.Group, toc.ProducerID, toc.ProducerEpoch, toc.Generation = id, group, pid, epoch, -1
	toc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}}}
	tr := gc.send(toc, -1).(*kmsg.TxnOffsetCommitResponse)
	wantCode(t, "TxnOffsetCommit for a group not added", tr.Topics[0].Partitions[0].ErrorCode, kerr.InvalidTxnState)
	aot := kmsg.NewPtrAddOffsetsToTxnRequest()
	aot.TransactionalID, aot.ProducerID, aot.ProducerEpoch, aot.Group = id, pid, epoch, group
	wantCode(t, "AddOffsetsToTxn", a.send(aot, -1).(*kmsg.AddOffsetsToTxnResponse).ErrorCode, nil)
	tr = gc.send(toc, -1).(*kmsg.TxnOffsetCommitResponse)
	wantCode(t, "TxnOffsetCommit after AddOffsetsToTxn", tr.Topics[0].Partitions[0].ErrorCode, nil)
	stable := func() kmsg.OffsetFetchResponseTopicPartition {
		ocs := kmsg.NewPtrOffsetFetchRequest()
		ocs.Group, ocs.RequireStable = group, true
		ocs.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
		return gc.send(ocs, 7).(*kmsg.OffsetFetchResponse).Topics[0].Partitions[0]
	}
	if p := stable(); p.ErrorCode != kerr.UnstableOffsetCommit.Code {
		t.Errorf("OffsetFetch require_stable of an offset pending in a transaction: %v offset %d", kerr.ErrorForCode(p.ErrorCode), p.Offset)
	}
	toc.MemberID = "nobody"
	tr = gc.send(toc, -1).(*kmsg.TxnOffsetCommitResponse)
	wantCode(t, "TxnOffsetCommit of an unknown member", tr.Topics[0].Partitions[0].ErrorCode, kerr.UnknownMemberID)

	// KIP-890 part 1: the brokers' verify-only form.
	verify := func(ep int16, parts ...int32) *kmsg.AddPartitionsToTxnResponse {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, pid, ep, true
		tx.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "t", Partitions: parts}}
		req.Transactions = append(req.Transactions, tx)
		return a.send(req, 4).(*kmsg.AddPartitionsToTxnResponse)
	}
	vr := verify(epoch, 0, 1)
	got := vr.Transactions[0].Topics[0].Partitions
	wantCode(t, "verify of an added partition", got[0].ErrorCode, nil)
	wantCode(t, "verify of a partition not added", got[1].ErrorCode, kerr.InvalidTxnState)
	wantCode(t, "verify with a stale epoch", verify(epoch+3, 0).Transactions[0].Topics[0].Partitions[0].ErrorCode, kerr.ProducerFenced)
	if d := a.describe(id); d.State != "Ongoing" || len(d.Topics) != 2 {
		t.Errorf("DescribeTransactions: %+v", d)
	}
	if d := a.describe("errors-unknown"); d.ErrorCode != kerr.TransactionalIDNotFound.Code {
		t.Errorf("DescribeTransactions of an unknown id: %v", kerr.ErrorForCode(d.ErrorCode))
	}

	// Another producer takes the id: the open transaction is aborted
	// with the epoch bumped, the new one retries until that completes.
	r = a.init(id, 30000, -1, -1)
	wantCode(t, "InitProducerId while another producer's transaction is open", r.ErrorCode, kerr.ConcurrentTransactions)
	wantCode(t, "the fenced producer's EndTxn", a.end(id, pid, epoch, true, -1), kerr.ProducerFenced)
	wantCode(t, "the fenced producer's EndTxn v1", a.end(id, pid, epoch, true, 1), kerr.InvalidProducerEpoch)
	waitFor(t, 20*time.Second, "the second producer's InitProducerId", func() bool {
		r = a.init(id, 30000, -1, -1)
		return r.ErrorCode == 0
	})
	if r.ProducerID != pid || r.ProducerEpoch != epoch+2 {
		t.Errorf("second producer got %d/%d, want %d/%d (one bump for the fence, one for its init)", r.ProducerID, r.ProducerEpoch, pid, epoch+2)
	}
	if d := a.describe(id); d.State != "Empty" || d.ProducerEpoch != epoch+2 {
		t.Errorf("after the fence: %+v", d)
	}
	// The aborted transaction's offsets were dropped.
	ocs := kmsg.NewPtrOffsetFetchRequest()
	ocs.Group = group
	ocs.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0}}}
	of := gc.send(ocs, 5).(*kmsg.OffsetFetchResponse)
	if o := of.Topics[0].Partitions[0].Offset; o != -1 {
		t.Errorf("an aborted transaction's offset is visible: %d", o)
	}
	if p := stable(); p.ErrorCode != 0 || p.Offset != -1 {
		t.Errorf("OffsetFetch require_stable after the abort: %v offset %d", kerr.ErrorForCode(p.ErrorCode), p.Offset)
	}
	lt := a.send(kmsg.NewPtrListTransactionsRequest(), -1).(*kmsg.ListTransactionsResponse)
	if len(lt.TransactionStates) != 1 || lt.TransactionStates[0].TransactionalID != id || lt.TransactionStates[0].TransactionState != "Empty" {
		t.Errorf("ListTransactions: %+v", lt.TransactionStates)
	}
	// A retried commit of a completed transaction is NONE; EndTxn of the
	// other outcome INVALID_TXN_STATE.
	pid, epoch = r.ProducerID, r.ProducerEpoch
	wantCode(t, "AddPartitionsToTxn", a.add(id, pid, epoch, 3, "t", 1)[0].ErrorCode, nil)
	wantCode(t, "EndTxn commit", a.end(id, pid, epoch, true, -1), nil)
	waitFor(t, 20*time.Second, "CompleteCommit", func() bool { return a.describe(id).State == "CompleteCommit" })
	wantCode(t, "EndTxn commit retried", a.end(id, pid, epoch, true, -1), nil)
	wantCode(t, "EndTxn abort after commit", a.end(id, pid, epoch, false, -1), kerr.InvalidTxnState)
}

// TestTxnTimeout: a transaction open past its timeout is aborted by the
// coordinator and its producer fenced.
func TestTxnTimeout(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 1, settings())
	kc := client(t, cl)
	createTopic(t, cl, kc, "t", 1, 1)
	const id = "timeout-1"
	a := api{t: t, kc: kc, id: txnCoordinator(t, kc, id)}
	r := a.init(id, 500, -1, -1)
	wantCode(t, "InitProducerId", r.ErrorCode, nil)
	wantCode(t, "AddPartitionsToTxn", a.add(id, r.ProducerID, r.ProducerEpoch, 3, "t", 0)[0].ErrorCode, nil)
	waitFor(t, 20*time.Second, "the timed-out transaction aborted", func() bool {
		d := a.describe(id)
		return d.State == "CompleteAbort" && d.ProducerEpoch == r.ProducerEpoch+1
	})
	wantCode(t, "the timed-out producer's EndTxn", a.end(id, r.ProducerID, r.ProducerEpoch, true, -1), kerr.ProducerFenced)
}

// TestTransactionalIDExpiration: an id idle for
// transactional.id.expiration.ms is forgotten (its tombstone written),
// also after a restart loads the log again.
func TestTransactionalIDExpiration(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 1, settings(), kafkaenv.Configure(func(c *broker.Config) {
		c.Txn.IDExpiration = 2 * time.Second
		c.Txn.RemoveCheck = 100 * time.Millisecond
		c.Txn.AbortCheck = 100 * time.Millisecond
	}))
	kc := client(t, cl)
	const id = "expiring-1"
	a := api{t: t, kc: kc, id: txnCoordinator(t, kc, id)}
	wantCode(t, "InitProducerId", a.init(id, 30000, -1, -1).ErrorCode, nil)
	if d := a.describe(id); d.State != "Empty" {
		t.Fatalf("just after InitProducerId: %+v", d)
	}
	waitFor(t, 20*time.Second, "the id expired", func() bool {
		return a.describe(id).ErrorCode == kerr.TransactionalIDNotFound.Code
	})
	cl.Broker(1).Restart()
	kc2 := client(t, cl)
	a = api{t: t, kc: kc2, id: txnCoordinator(t, kc2, id)}
	var d kmsg.DescribeTransactionsResponseTransactionState
	waitFor(t, 20*time.Second, "the coordinator loaded", func() bool {
		d = a.describe(id)
		return d.ErrorCode != kerr.CoordinatorLoadInProgress.Code && d.ErrorCode != kerr.NotCoordinator.Code
	})
	if d.ErrorCode != kerr.TransactionalIDNotFound.Code {
		t.Errorf("after a restart the expired id is %v %s", kerr.ErrorForCode(d.ErrorCode), d.State)
	}
}
