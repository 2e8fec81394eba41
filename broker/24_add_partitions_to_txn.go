package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/broker/txn"
	"github.com/zkafka/zkafka/kproto"
)

// AddPartitionsToTxn (key 24), v0-5, via kmsg.
//
// v0-3 is the producer's: one transaction, answered per partition. WRITE
// on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED on
// every partition) and on each topic; a topic the principal may not write
// (TOPIC_AUTHORIZATION_FAILED) or that does not exist
// (UNKNOWN_TOPIC_OR_PARTITION) fails the request, the other partitions
// answering OPERATION_NOT_ATTEMPTED, as Kafka.
//
// v4+ is the brokers' batched form (KIP-890 part 1), CLUSTER_ACTION
// only: several transactions; with verify_only a partition leader asks
// whether the partitions are already in the ongoing transaction (NONE or
// INVALID_TXN_STATE each) before it appends a transactional batch, and
// nothing is written. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2.

func init() {
	regKey(kmsg.AddPartitionsToTxn.Int16(), 0, 5, kmsgHandler(handleAddPartitionsToTxn))
}

const codeOperationNotAttempted kproto.ErrorCode = 55

func handleAddPartitionsToTxn(c *conn, req *kmsg.AddPartitionsToTxnRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if req.Version >= 4 {
		if !c.allowedCluster(authz.OpClusterAction) && c.b.acls != nil {
			resp.ErrorCode = int16(kproto.CodeClusterAuthorizationFailed)
			return resp, nil
		}
		for _, rt := range req.Transactions {
			resp.Transactions = append(resp.Transactions, c.addPartitionsBatched(rt))
		}
		return resp, nil
	}
	topics := make([]kmsg.AddPartitionsToTxnRequestTransactionTopic, 0, len(req.Topics))
	for _, t := range req.Topics {
		topics = append(topics, kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: t.Topic, Partitions: t.Partitions})
	}
	codes := c.addPartitions(req.TransactionalID, req.ProducerID, req.ProducerEpoch, topics, false)
	for _, t := range req.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, int16(fencedCode(codes[txn.TopicPartition{Topic: t.Topic, Partition: p}], req.Version, 2))
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// fencedCode is code as a client of version v understands it:
// PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below version since.
func fencedCode(code kproto.ErrorCode, v, since int16) kproto.ErrorCode {
	if code == txn.CodeProducerFenced && v < since {
		return kproto.CodeInvalidProducerEpoch
	}
	return code
}

func (c *conn) addPartitionsBatched(rt kmsg.AddPartitionsToTxnRequestTransaction) kmsg.AddPartitionsToTxnResponseTransaction {
	out := kmsg.NewAddPartitionsToTxnResponseTransaction()
	out.TransactionalID = rt.TransactionalID
	codes := c.addPartitions(rt.TransactionalID, rt.ProducerID, rt.ProducerEpoch, rt.Topics, rt.VerifyOnly)
	for _, t := range rt.Topics {
		ot := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
		ot.Topic = t.Topic
		for _, p := range t.Partitions {
			op := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
			op.Partition, op.ErrorCode = p, int16(codes[txn.TopicPartition{Topic: t.Topic, Partition: p}])
			ot.Partitions = append(ot.Partitions, op)
		}
		out.Topics = append(out.Topics, ot)
	}
	return out
}

// addPartitions checks and adds (or, verifyOnly, verifies) one
// transaction's partitions; the code of each.
func (c *conn) addPartitions(id string, pid int64, epoch int16, topics []kmsg.AddPartitionsToTxnRequestTransactionTopic, verifyOnly bool) map[txn.TopicPartition]kproto.ErrorCode {
	codes := map[txn.TopicPartition]kproto.ErrorCode{}
	var parts []txn.TopicPartition
	for _, t := range topics {
		for _, p := range t.Partitions {
			parts = append(parts, txn.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	all := func(code kproto.ErrorCode) map[txn.TopicPartition]kproto.ErrorCode {
		for _, p := range parts {
			codes[p] = code
		}
		return codes
	}
	if id == "" {
		return all(kproto.CodeInvalidRequest)
	}
	if !verifyOnly {
		if !c.allowed(authz.OpWrite, authz.ResourceTransactionalID, id) {
			return all(codeTransactionalIDAuthorizationFailed)
		}
		failed := false
		for _, p := range parts {
			t := c.b.cluster.topic(p.Topic)
			switch {
			case !c.allowedTopic(authz.OpWrite, p.Topic):
				codes[p], failed = kproto.CodeTopicAuthorizationFailed, true
			case t == nil || p.Partition < 0 || int(p.Partition) >= len(t.replicas):
				codes[p], failed = kproto.CodeUnknownTopicOrPartition, true
			}
		}
		if failed {
			for _, p := range parts {
				if codes[p] == kproto.CodeNone {
					codes[p] = codeOperationNotAttempted
				}
			}
			return codes
		}
	}
	if verifyOnly {
		code, each := c.b.txns.verify(id, pid, epoch, parts)
		if code != kproto.CodeNone {
			return all(code)
		}
		for i, p := range parts {
			codes[p] = each[i]
		}
		return codes
	}
	code, _ := c.b.txns.doWaiting(id, func(t *txn.Txn, nowMs int64) (*txn.Txn, txn.Step) {
		if t == nil {
			return nil, txn.Step{Code: kproto.CodeInvalidProducerIDMapping}
		}
		return t, t.AddPartitions(pid, epoch, parts, nowMs)
	})
	return all(code)
}
