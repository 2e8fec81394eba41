package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/broker/txn"
	"github.com/zkafka/zkafka/kproto"
)

// AddOffsetsToTxn (key 25), v0-3, via kmsg.
//
// Adds the group's partition of __consumer_offsets to the transaction
// (as AddPartitionsToTxn would), so that the transaction's markers reach
// the group's coordinator, which then makes the offsets of
// TxnOffsetCommit visible or drops them (txn_offsets.go). WRITE on the
// transactional id and READ on the group. PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v2.

func init() { regKey(kmsg.AddOffsetsToTxn.Int16(), 0, 3, kmsgHandler(handleAddOffsetsToTxn)) }

func handleAddOffsetsToTxn(c *conn, req *kmsg.AddOffsetsToTxnRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	code := c.addOffsetsToTxn(req)
	resp.ErrorCode = int16(fencedCode(code, req.Version, 2))
	return resp, nil
}

func (c *conn) addOffsetsToTxn(req *kmsg.AddOffsetsToTxnRequest) kproto.ErrorCode {
	switch {
	case req.TransactionalID == "":
		return kproto.CodeInvalidRequest
	case !c.allowed(authz.OpWrite, authz.ResourceTransactionalID, req.TransactionalID):
		return codeTransactionalIDAuthorizationFailed
	case !c.allowedGroup(authz.OpRead, req.Group):
		return kproto.CodeGroupAuthorizationFailed
	}
	n := int(c.b.groups.cfg.OffsetsTopicPartitions)
	if t := c.b.cluster.topic(offsetsTopic); t != nil && len(t.replicas) > 0 {
		n = len(t.replicas)
	} else {
		c.b.ensureOffsetsTopic()
	}
	tp := txn.TopicPartition{Topic: offsetsTopic, Partition: offsetsPartitionOf(req.Group, n)}
	code, _ := c.b.txns.doWaiting(req.TransactionalID, func(t *txn.Txn, nowMs int64) (*txn.Txn, txn.Step) {
		if t == nil {
			return nil, txn.Step{Code: kproto.CodeInvalidProducerIDMapping}
		}
		return t, t.AddPartitions(req.ProducerID, req.ProducerEpoch, []txn.TopicPartition{tp}, nowMs)
	})
	return code
}
