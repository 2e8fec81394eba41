package broker

import (
	"context"
	"errors"
	"slices"
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
// All partitions of one Produce request that need it are one transaction
// of the request, and the verifications waiting for the same coordinator
// go together in one request (txnVerifier). The answer's codes, as Kafka 3.7's ReplicaManager maps them for
// the Produce response: PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH;
// NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS,
// CONCURRENT_TRANSACTIONS and an unreachable coordinator become
// NOT_ENOUGH_REPLICAS (retriable for every client); the rest (notably
// INVALID_TXN_STATE for a partition not in the transaction) as they are.
// A coordinator that does not know AddPartitionsToTxn v4 cannot verify:
// the produce goes on unverified, as Kafka does.

// txnVerifier holds the inter-broker clients of the coordinators and the
// verifications waiting for each, by address: one sender per coordinator
// at a time takes every waiting one into a single AddPartitionsToTxn
// (Kafka's AddPartitionsToTxnManager), one transaction per transactional
// id (a second ask for an id already in the request waits for the next).
type txnVerifier struct {
	mu      sync.Mutex
	clients map[string]*kgo.Client
	queues  map[string][]*verifyAsk // waiting; a sender runs while non-empty
	closed  bool
}

// verifyAsk is one Produce request's verification.
type verifyAsk struct {
	tx   kmsg.AddPartitionsToTxnRequestTransaction
	done chan map[string]map[int32]kproto.ErrorCode // the coordinator's codes, nil when unanswered
}

// verifyTimeout bounds one verification round trip.
const verifyTimeout = 10 * time.Second

// verifyPartitions asks txnID's coordinator about parts (topic ->
// partitions) for (pid, epoch) and returns a code per topic and
// partition; NONE is verified.
func (b *Broker) verifyPartitions(txnID string, pid int64, epoch int16, parts map[string][]int32) map[string]map[int32]kproto.ErrorCode {
	all := func(code kproto.ErrorCode) map[string]map[int32]kproto.ErrorCode {
		out := make(map[string]map[int32]kproto.ErrorCode, len(parts))
		for t, ps := range parts {
			out[t] = map[int32]kproto.ErrorCode{}
			for _, p := range ps {
				out[t][p] = code
			}
		}
		return out
	}
	codes, ok := b.askTxnCoordinator(txnID, pid, epoch, parts)
	if !ok {
		return all(kproto.CodeNotEnoughReplicas)
	}
	out := all(kproto.CodeInvalidTxnState) // a partition the answer leaves out is not verified
	for t, m := range out {
		for p := range m {
			if code, ok := codes[t][p]; ok {
				m[p] = verifyCode(code)
			}
		}
	}
	return out
}

// askTxnCoordinator sends parts (topic -> partitions) of (pid, epoch) to
// txnID's transaction coordinator as a verify-only AddPartitionsToTxn,
// batched with the other verifications bound for it, and returns its
// codes as they came; ok false when it could not be asked or did not
// answer.
func (b *Broker) askTxnCoordinator(txnID string, pid int64, epoch int16, parts map[string][]int32) (map[string]map[int32]kproto.ErrorCode, bool) {
	_, tparts, ok := b.meta.topic(transactionTopic)
	if !ok || len(tparts) == 0 {
		return nil, false
	}
	leader := tparts[transactionPartitionOf(txnID, len(tparts))].leader
	addr, ok := b.interBrokerAddr(leader)
	if leader < 0 || !ok {
		return nil, false
	}
	ask := newVerifyAsk(txnID, pid, epoch, parts)
	if !b.txnVerify.enqueue(b, addr, ask) {
		return nil, false
	}
	var codes map[string]map[int32]kproto.ErrorCode
	select {
	case codes = <-ask.done:
	case <-b.done:
	}
	return codes, codes != nil
}

func newVerifyAsk(txnID string, pid int64, epoch int16, parts map[string][]int32) *verifyAsk {
	ask := &verifyAsk{tx: kmsg.NewAddPartitionsToTxnRequestTransaction(), done: make(chan map[string]map[int32]kproto.ErrorCode, 1)}
	ask.tx.TransactionalID, ask.tx.ProducerID, ask.tx.ProducerEpoch, ask.tx.VerifyOnly = txnID, pid, epoch, true
	for t, ps := range parts {
		rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		rt.Topic, rt.Partitions = t, ps
		ask.tx.Topics = append(ask.tx.Topics, rt)
	}
	return ask
}

// enqueue adds ask to addr's queue, starting its sender if none runs.
func (v *txnVerifier) enqueue(b *Broker, addr string, ask *verifyAsk) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return false
	}
	if v.queues == nil {
		v.queues = map[string][]*verifyAsk{}
	}
	v.queues[addr] = append(v.queues[addr], ask)
	if len(v.queues[addr]) > 1 {
		return true // its sender runs
	}
	return b.goTracked("txn-verify", func() { v.send(b, addr) })
}

// done drops the asks just answered from addr's queue; it reports whether
// more wait (the sender goes on).
func (v *txnVerifier) done(addr string, asks []*verifyAsk) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	q := v.queues[addr]
	for _, a := range asks {
		for i, w := range q {
			if w == a {
				q = append(q[:i], q[i+1:]...)
				break
			}
		}
	}
	if len(q) == 0 {
		delete(v.queues, addr)
		return false
	}
	v.queues[addr] = q
	return true
}

// send is addr's sender: it sends the waiting asks, in batches, until
// none waits.
func (v *txnVerifier) send(b *Broker, addr string) {
	for {
		v.mu.Lock()
		asks := slices.Clone(v.queues[addr])
		v.mu.Unlock()
		asks = firstPerID(asks)
		if len(asks) == 0 {
			return
		}
		answers := b.sendVerify(addr, asks)
		for i, a := range asks {
			a.done <- answers[i]
		}
		if !v.done(addr, asks) {
			return
		}
	}
}

// firstPerID keeps the first ask of each transactional id.
func firstPerID(asks []*verifyAsk) []*verifyAsk {
	ids := map[string]bool{}
	out := asks[:0]
	for _, a := range asks {
		if !ids[a.tx.TransactionalID] {
			ids[a.tx.TransactionalID] = true
			out = append(out, a)
		}
	}
	return out
}

// sendVerify sends one AddPartitionsToTxn verify_only request for asks to
// the coordinator at addr and returns each ask's codes (nil: no answer).
// A coordinator that does not know v4 verifies nothing: every partition
// answers NONE, and the produce goes on unverified, as Kafka does.
func (b *Broker) sendVerify(addr string, asks []*verifyAsk) []map[string]map[int32]kproto.ErrorCode {
	out := make([]map[string]map[int32]kproto.ErrorCode, len(asks))
	cl, err := b.txnVerify.client(addr, b.interBrokerClientOpts())
	if err != nil {
		return out
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	for _, a := range asks {
		req.Transactions = append(req.Transactions, a.tx)
	}
	// Shutdown closes the clients, which ends a request in flight.
	ctx, cancel := context.WithTimeout(context.Background(), verifyTimeout)
	defer cancel()
	kresp, err := cl.SeedBrokers()[0].Request(ctx, req)
	switch {
	case err != nil && strings.Contains(err.Error(), "broker is too old"):
		b.log.Warn("the transaction coordinator does not support verification (AddPartitionsToTxn v4); producing unverified", "coordinator", addr)
		for i, a := range asks {
			out[i] = uniformCodes(a.tx, kproto.CodeNone)
		}
		return out
	case err != nil:
		b.log.Debug("transaction verification failed", "coordinator", addr, "err", err)
		return out
	}
	resp := kresp.(*kmsg.AddPartitionsToTxnResponse)
	if code := kproto.ErrorCode(resp.ErrorCode); code != kproto.CodeNone {
		for i, a := range asks {
			out[i] = uniformCodes(a.tx, code)
		}
		return out
	}
	byID := map[string]map[string]map[int32]kproto.ErrorCode{}
	for _, rtx := range resp.Transactions {
		m := map[string]map[int32]kproto.ErrorCode{}
		for _, rt := range rtx.Topics {
			m[rt.Topic] = map[int32]kproto.ErrorCode{}
			for _, rp := range rt.Partitions {
				m[rt.Topic][rp.Partition] = kproto.ErrorCode(rp.ErrorCode)
			}
		}
		byID[rtx.TransactionalID] = m
	}
	for i, a := range asks {
		out[i] = byID[a.tx.TransactionalID]
		if out[i] == nil {
			out[i] = map[string]map[int32]kproto.ErrorCode{}
		}
	}
	return out
}

// uniformCodes answers every partition of tx with code.
func uniformCodes(tx kmsg.AddPartitionsToTxnRequestTransaction, code kproto.ErrorCode) map[string]map[int32]kproto.ErrorCode {
	out := map[string]map[int32]kproto.ErrorCode{}
	for _, t := range tx.Topics {
		out[t.Topic] = map[int32]kproto.ErrorCode{}
		for _, p := range t.Partitions {
			out[t.Topic][p] = code
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
