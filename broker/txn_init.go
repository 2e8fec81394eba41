package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/broker/txn"
	"github.com/zkafka/zkafka/kproto"
)

// initTransactional is InitProducerId with a transactional id (Kafka's
// TransactionCoordinator.handleInitProducerId): WRITE on the id, a
// timeout within transaction.max.timeout.ms, then the state machine's
// answer once its record is in the log: the id's producer id with the
// epoch bumped (the previous producer fenced), CONCURRENT_TRANSACTIONS
// while a previous transaction completes or an open one is being aborted.
// PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v4.
func (c *conn) initTransactional(req *kmsg.InitProducerIDRequest, resp *kmsg.InitProducerIDResponse) {
	id := *req.TransactionalID
	fail := func(code kproto.ErrorCode) { resp.ErrorCode = int16(fencedCode(code, req.Version, 4)) }
	switch {
	case id == "":
		fail(kproto.CodeInvalidRequest)
		return
	case !c.allowed(authz.OpWrite, authz.ResourceTransactionalID, id):
		fail(codeTransactionalIDAuthorizationFailed)
		return
	case (req.ProducerID == -1) != (req.ProducerEpoch == -1):
		fail(kproto.CodeInvalidRequest)
		return
	case !c.b.txns.sm.ValidTimeout(req.TransactionTimeoutMillis):
		fail(kproto.CodeInvalidTransactionTimeout)
		return
	}
	if c.b.cluster.topic(transactionTopic) == nil {
		c.b.ensureTransactionTopic()
		fail(kproto.CodeNotCoordinator)
		return
	}
	// A producer id is allocated outside the coordinator's lock (a block
	// may need a ZooKeeper write) when the id is new or its epoch spent.
	pid := int64(-1)
	if c.b.txns.needsProducerID(id) {
		var err error
		if pid, err = c.b.nextProducerID(); err != nil {
			c.log.Warn("allocating a producer id", "err", err)
			fail(kproto.CodeCoordinatorNotAvailable)
			return
		}
	}
	newPID := func() (int64, error) {
		if pid < 0 {
			return -1, errNoProducerID
		}
		return pid, nil
	}
	timeout := req.TransactionTimeoutMillis
	code, m := c.b.txns.do(id, func(t *txn.Txn, nowMs int64) (*txn.Txn, txn.Step) {
		if t == nil {
			if pid < 0 {
				return nil, txn.Step{Code: kproto.CodeConcurrentTransactions} // created and gone meanwhile: the client retries
			}
			t, pid = txn.New(id, pid, timeout, nowMs), -1
		}
		return t, t.InitProducerID(timeout, req.ProducerID, req.ProducerEpoch, nowMs, newPID)
	})
	if code != kproto.CodeNone {
		fail(code)
		return
	}
	resp.ProducerID, resp.ProducerEpoch = m.ProducerID, m.ProducerEpoch
}
