package broker

import (
	"strings"

	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// Transactional produce (00_produce.go's part of KIP-98 and KIP-890):
// the transactional id must be authorized for WRITE (else every
// partition answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka's
// KafkaApis), a transactional batch needs a transactional id, and the
// partitions whose batch would open a transaction are verified with the
// coordinator (txn_partition_verify.go) before any is appended.

// txnVerificationKey is the broker config that turns KIP-890
// verification on or off; dynamic, as in Kafka.
const txnVerificationKey = "transaction.partition.verification.enable"

// txnVerification reports whether transactional produce is verified now:
// the dynamic value (this broker's, else the cluster default's), else
// server.properties' (Config.TxnPartitionVerification).
func (b *Broker) txnVerification() bool {
	if v, _, ok := b.dyn.Load().lookup(txnVerificationKey); ok {
		if checkBool(v) == nil {
			return strings.EqualFold(v, "true")
		}
	}
	return b.cfg.TxnPartitionVerification
}

// produceVerdict is a partition's verification: its guard, or the code
// the partition answers.
type produceVerdict struct {
	guard uint64
	code  kproto.ErrorCode
}

// txnProduceDenied reports whether a Produce with a transactional id is
// refused as a whole.
func (c *conn) txnProduceDenied(req *kproto.ProduceRequest) bool {
	return req.TransactionID != nil && !c.allowed(authz.OpWrite, authz.ResourceTransactionalID, *req.TransactionID)
}

// verifyProduce verifies, in one request to the coordinator, the
// partitions of req whose transactional batch would open a transaction
// on a partition led here, of a topic the principal may write; nil when
// there are none or verification is off. A batch of another producer than
// the first one's is not verified (its append is refused).
func (c *conn) verifyProduce(req *kproto.ProduceRequest) map[string]map[int32]produceVerdict {
	if req.TransactionID == nil || !c.b.txnVerification() {
		return nil
	}
	type pending struct {
		part  *partition
		guard uint64
	}
	var (
		pid     int64 = -1
		epoch   int16
		asks    = map[string][]int32{}
		started = map[string]map[int32]pending{}
	)
	for i := range req.Topics {
		rt := &req.Topics[i]
		t := c.b.cluster.topic(rt.Topic)
		if t == nil || !c.allowedTopic(authz.OpWrite, rt.Topic) {
			continue
		}
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			it := kproto.SplitBatches(rp.Records)
			b, ok := it.Next()
			if !ok || len(b) < kproto.BatchHeaderSize || b.Magic() != 2 || !b.Transactional() || b.Control() {
				continue
			}
			if pid == -1 {
				pid, epoch = b.ProducerID(), b.ProducerEpoch()
			}
			part := t.partition(rp.Partition)
			if part == nil || b.ProducerID() != pid || b.ProducerEpoch() != epoch || !part.isLeader() || !part.needsVerification(pid) {
				continue
			}
			if started[rt.Topic] == nil {
				started[rt.Topic] = map[int32]pending{}
			}
			started[rt.Topic][rp.Partition] = pending{part, part.startVerification(pid, epoch)}
			asks[rt.Topic] = append(asks[rt.Topic], rp.Partition)
		}
	}
	if len(asks) == 0 {
		return nil
	}
	codes := c.b.verifyPartitions(*req.TransactionID, pid, epoch, asks)
	out := make(map[string]map[int32]produceVerdict, len(started))
	for t, ps := range started {
		out[t] = make(map[int32]produceVerdict, len(ps))
		for p, pd := range ps {
			code := codes[t][p]
			if code != kproto.CodeNone {
				pd.part.dropVerification(pid, pd.guard)
			}
			out[t][p] = produceVerdict{guard: pd.guard, code: code}
		}
	}
	return out
}
