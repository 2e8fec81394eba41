package broker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/zkafka/zkafka/kproto"
)

// The partition leader's side of KIP-890 part 1's verification: it asks
// the transaction coordinator (the leader of the transactional id's
// __transaction_state partition, txn_topic.go, found in the metadata
// cache) with AddPartitionsToTxn v4+ verify_only whether the partitions
// of a transactional produce are in the producer's current transaction.
// All partitions of one Produce request that need it go in one request
// (Kafka's AddPartitionsToTxnManager also merges the requests of other
// producers bound for the same coordinator; here each Produce sends its
// own). The answer's codes, as Kafka 3.7's ReplicaManager maps them for
// the Produce response: PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH;
// NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS,
// CONCURRENT_TRANSACTIONS and an unreachable coordinator become
// NOT_ENOUGH_REPLICAS (retriable for every client); the rest (notably
// INVALID_TXN_STATE for a partition not in the transaction) as they are.
// A coordinator that does not know AddPartitionsToTxn v4 cannot verify:
// the produce goes on unverified, as Kafka does.

// txnVerifier holds the inter-broker clients of the coordinators, by
// address.
type txnVerifier struct {
	mu      sync.Mutex
	clients map[string]*kgo.Client
	closed  bool
}

// verifyTimeout bounds one verification round trip.
const verifyTimeout = 10 * time.Second

// verifyPartitions asks txnID's coordinator about parts (topic ->
// partitions) for (pid, epoch) and returns a code per topic and
// partition; NONE is verified.
func (b *Broker) verifyPartitions(txnID string, pid int64, epoch int16, parts map[string][]int32) map[string]map[int32]kproto.ErrorCode {
	out := make(map[string]map[int32]kproto.ErrorCode, len(parts))
	all := func(code kproto.ErrorCode) map[string]map[int32]kproto.ErrorCode {
		for t, ps := range parts {
			out[t] = map[int32]kproto.ErrorCode{}
			for _, p := range ps {
				out[t][p] = code
			}
		}
		return out
	}
	_, tparts, ok := b.meta.topic(transactionTopic)
	if !ok || len(tparts) == 0 {
		return all(kproto.CodeNotEnoughReplicas)
	}
	leader := tparts[transactionPartitionOf(txnID, len(tparts))].leader
	addr, ok := b.interBrokerAddr(leader)
	if leader < 0 || !ok {
		return all(kproto.CodeNotEnoughReplicas)
	}
	cl, err := b.txnVerify.client(addr, b.interBrokerClientOpts())
	if err != nil {
		return all(kproto.CodeNotEnoughReplicas)
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = txnID, pid, epoch, true
	for t, ps := range parts {
		rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		rt.Topic, rt.Partitions = t, ps
		tx.Topics = append(tx.Topics, rt)
	}
	req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{tx}
	ctx, cancel := context.WithTimeout(context.Background(), verifyTimeout)
	defer cancel()
	kresp, err := cl.SeedBrokers()[0].Request(ctx, req)
	switch {
	case err != nil && strings.Contains(err.Error(), "broker is too old"):
		b.log.Warn("the transaction coordinator does not support verification (AddPartitionsToTxn v4); producing unverified", "coordinator", leader)
		return all(kproto.CodeNone)
	case err != nil:
		b.log.Debug("transaction verification failed", "coordinator", leader, "err", err)
		return all(kproto.CodeNotEnoughReplicas)
	}
	resp := kresp.(*kmsg.AddPartitionsToTxnResponse)
	if code := kproto.ErrorCode(resp.ErrorCode); code != kproto.CodeNone {
		return all(verifyCode(code))
	}
	all(kproto.CodeInvalidTxnState) // a partition the answer leaves out is not verified
	for _, rtx := range resp.Transactions {
		if rtx.TransactionalID != txnID {
			continue
		}
		for _, rt := range rtx.Topics {
			for _, rp := range rt.Partitions {
				if m := out[rt.Topic]; m != nil {
					if _, asked := m[rp.Partition]; asked {
						m[rp.Partition] = verifyCode(kproto.ErrorCode(rp.ErrorCode))
					}
				}
			}
		}
	}
	return out
}

// verifyCode maps a coordinator's code to the Produce response's.
func verifyCode(code kproto.ErrorCode) kproto.ErrorCode {
	switch code {
	case kproto.ErrorCode(kerr.ProducerFenced.Code):
		return kproto.CodeInvalidProducerEpoch
	case kproto.CodeNotCoordinator, kproto.CodeCoordinatorNotAvailable, kproto.CodeCoordinatorLoadInProgress,
		kproto.CodeConcurrentTransactions:
		return kproto.CodeNotEnoughReplicas
	}
	return code
}

// client is the verifier's client of addr, made on first use.
func (v *txnVerifier) client(addr string, extra []kgo.Opt) (*kgo.Client, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, errors.New("broker shutting down")
	}
	if cl := v.clients[addr]; cl != nil {
		return cl, nil
	}
	minVersions := new(kversion.Versions)
	minVersions.SetMaxKeyVersion(int16(kmsg.AddPartitionsToTxn), 4) // the verify form
	opts := append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID("zkafka-txn-verify"), kgo.RequestRetries(0),
		kgo.DialTimeout(5 * time.Second), kgo.MinVersions(minVersions)}, extra...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	if v.clients == nil {
		v.clients = map[string]*kgo.Client{}
	}
	v.clients[addr] = cl
	return cl, nil
}

// close closes the clients (at shutdown).
func (v *txnVerifier) close() {
	v.mu.Lock()
	clients := v.clients
	v.clients, v.closed = nil, true
	v.mu.Unlock()
	for _, cl := range clients {
		cl.Close()
	}
}
