package broker

import (
	"sync/atomic"
)

// KIP-890 part 1 on the partition (Kafka 3.7's ProducerStateManager
// verification state and ReplicaManager's verification guard): a
// transactional batch that would open a transaction (its producer has
// none open here) is appended only after the transaction coordinator
// confirmed that the partition is in the producer's current transaction
// (AddPartitionsToTxn v4+ verify_only, txn_partition_verify.go). The
// confirmation is remembered per producer with a guard, a token unique
// to that verification: the append must present it, and a marker for the
// producer (the transaction ended meanwhile) or the transaction opening
// drops it. So a batch that arrives after its transaction ended (a
// producer's late retry, a zombie) is refused with INVALID_TXN_STATE
// instead of opening a transaction nobody will end (the Jepsen "hanging
// transaction").

// verification is a producer's pending confirmation on a partition.
type verification struct {
	epoch int16
	guard uint64
}

var verificationGuards atomic.Uint64

// needsVerification reports whether a transactional batch of (pid,
// epoch) must be verified first: the producer has no open transaction
// here. Kafka checks the same before asking the coordinator.
func (p *partition) needsVerification(pid int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.mu.producers[pid]
	return st == nil || st.txnFirst < 0
}

// startVerification records a verification for (pid, epoch) in flight
// and returns its guard (never 0).
func (p *partition) startVerification(pid int64, epoch int16) uint64 {
	g := verificationGuards.Add(1)
	p.mu.Lock()
	p.mu.verified[pid] = verification{epoch: epoch, guard: g}
	p.mu.Unlock()
	return g
}

// dropVerification forgets a verification the coordinator refused.
func (p *partition) dropVerification(pid int64, guard uint64) {
	p.mu.Lock()
	if v, ok := p.mu.verified[pid]; ok && v.guard == guard {
		delete(p.mu.verified, pid)
	}
	p.mu.Unlock()
}

// verifiedLocked reports whether a transactional data batch of (pid,
// epoch) carrying guard may be appended: the producer's transaction is
// open here, or guard is the verification recorded for it. p.mu must be
// held.
func (p *partition) verifiedLocked(pid int64, epoch int16, guard uint64) bool {
	if st := p.mu.producers[pid]; st != nil && st.txnFirst >= 0 {
		return true
	}
	v, ok := p.mu.verified[pid]
	return ok && guard != 0 && v.guard == guard && v.epoch == epoch
}
