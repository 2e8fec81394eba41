package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/broker/txn"
	"github.com/zkafka/zkafka/kproto"
)

// EndTxn (key 26), v0-3, via kmsg.
//
// Commits or aborts the transaction: answered once PrepareCommit or
// PrepareAbort is in the log; the markers and the Complete state follow
// (txn_markers.go); until then the producer's next InitProducerId gets
// CONCURRENT_TRANSACTIONS, and its next AddPartitionsToTxn,
// AddOffsetsToTxn or EndTxn waits for them (doWaiting, at most 500 ms,
// then CONCURRENT_TRANSACTIONS as Kafka answers at once). An EndTxn with no
// transaction open is INVALID_TXN_STATE; a retry of the one that
// completed is NONE. WRITE on the transactional id. PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v2. v5's producer id and epoch (KIP-890
// part 2, an epoch bump per transaction) are not served.

func init() { regKey(kmsg.EndTxn.Int16(), 0, 3, kmsgHandler(handleEndTxn)) }

func handleEndTxn(c *conn, req *kmsg.EndTxnRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	var code kproto.ErrorCode
	switch {
	case req.TransactionalID == "":
		code = kproto.CodeInvalidRequest
	case !c.allowed(authz.OpWrite, authz.ResourceTransactionalID, req.TransactionalID):
		code = codeTransactionalIDAuthorizationFailed
	default:
		code, _ = c.b.txns.doWaiting(req.TransactionalID, func(t *txn.Txn, nowMs int64) (*txn.Txn, txn.Step) {
			if t == nil {
				return nil, txn.Step{Code: kproto.CodeInvalidProducerIDMapping}
			}
			return t, t.EndTxn(req.ProducerID, req.ProducerEpoch, req.Commit, nowMs)
		})
	}
	resp.ErrorCode = int16(fencedCode(code, req.Version, 2))
	return resp, nil
}
