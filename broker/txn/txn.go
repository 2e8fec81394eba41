package txn

import (
	"math"
	"slices"
	"strings"

	"github.com/zkafka/zkafka/kproto"
)

// State is a transaction's state, numbered as Kafka's TransactionState
// ids (the byte in TransactionLogValue).
type State int8

const (
	Empty State = iota
	Ongoing
	PrepareCommit
	PrepareAbort
	CompleteCommit
	CompleteAbort
	Dead
	PrepareEpochFence
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

func (s State) String() string {
	if int(s) < len(stateNames) && s >= 0 {
		return stateNames[s]
	}
	return "Unknown"
}

// Error codes this package answers that kproto does not name.
const (
	CodeProducerFenced kproto.ErrorCode = 90
)

// NoEpoch is Kafka's RecordBatch.NO_PRODUCER_EPOCH.
const NoEpoch int16 = -1

// TopicPartition names a partition of a transaction.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (a TopicPartition) compare(b TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return int(a.Partition) - int(b.Partition)
}

// Metadata is what the log holds of a transactional id (Kafka's
// TransactionMetadata; the last producer id and epoch are memory only,
// as TransactionLogValue v0 has no field for them).
type Metadata struct {
	ProducerID        int64
	LastProducerID    int64
	ProducerEpoch     int16
	LastProducerEpoch int16
	TimeoutMs         int32
	State             State
	// Partitions of the transaction, sorted, without duplicates.
	Partitions []TopicPartition
	// StartMs is when the transaction began (first partition added);
	// UpdateMs the last state change. Milliseconds since the epoch.
	StartMs, UpdateMs int64
}

// Txn is one transactional id's state as the coordinator holds it.
type Txn struct {
	ID  string
	Cur Metadata
	// Pending is the metadata written and not yet acknowledged; nil
	// when no write is in flight.
	Pending *Metadata
}

// Config are the coordinator's limits.
type Config struct {
	// MaxTimeoutMs is transaction.max.timeout.ms.
	MaxTimeoutMs int32
	// ExpirationMs is transactional.id.expiration.ms.
	ExpirationMs int64
}

// Step is what a request or timer asks the shell to do.
type Step struct {
	// Code answers the request (after Write is acknowledged, if any).
	Code kproto.ErrorCode
	// Write, when set, is to be appended to the log; Apply makes it
	// current once acknowledged, Abandon when the write failed.
	Write *Metadata
	// Markers: once Write is applied, send the markers of its Prepare
	// state (the fence of InitProducerId and timeouts, and EndTxn).
	Markers bool
}

// New is the Txn of an id not yet known: a fresh producer id, no epoch.
func New(id string, producerID int64, timeoutMs int32, nowMs int64) *Txn {
	return &Txn{ID: id, Cur: Metadata{ProducerID: producerID, LastProducerID: -1, ProducerEpoch: NoEpoch,
		LastProducerEpoch: NoEpoch, TimeoutMs: timeoutMs, State: Empty, StartMs: -1, UpdateMs: nowMs}}
}

func (t *Txn) begin(m Metadata, code kproto.ErrorCode, markers bool) Step {
	t.Pending = &m
	return Step{Code: code, Write: &m, Markers: markers}
}

// Apply makes the pending write current (its record is acknowledged).
func (t *Txn) Apply() {
	if t.Pending != nil {
		t.Cur, t.Pending = *t.Pending, nil
	}
}

// Abandon drops the pending write (its append failed).
func (t *Txn) Abandon() { t.Pending = nil }

// epochExhausted is Kafka's TransactionMetadata.isEpochExhausted.
func epochExhausted(e int16) bool { return e >= math.MaxInt16-1 }

// ValidTimeout reports whether timeoutMs is acceptable.
func (c Config) ValidTimeout(timeoutMs int32) bool {
	return timeoutMs > 0 && timeoutMs <= c.MaxTimeoutMs
}

// InitProducerID handles InitProducerId with a transactional id. expectPID
// and expectEpoch are the request's (KIP-360; -1 when not given);
// newPID allocates a producer id when the epoch is exhausted. The shell
// checks the timeout first (ValidTimeout).
func (t *Txn) InitProducerID(timeoutMs int32, expectPID int64, expectEpoch int16, nowMs int64, newPID func() (int64, error)) Step {
	if t.Pending != nil {
		return Step{Code: kproto.CodeConcurrentTransactions}
	}
	cur := t.Cur
	expect := expectPID != -1 // the shell refuses one of the two alone
	if expect && !(cur.ProducerEpoch == NoEpoch || expectPID == cur.ProducerID ||
		(expectPID == cur.LastProducerID && epochExhausted(expectEpoch))) {
		return Step{Code: CodeProducerFenced}
	}
	switch cur.State {
	case PrepareCommit, PrepareAbort:
		return Step{Code: kproto.CodeConcurrentTransactions}
	case Ongoing:
		// Fence the producer and abort its transaction; the client
		// retries and finds it CompleteAbort.
		m := cur
		m.LastProducerEpoch, m.ProducerEpoch = cur.ProducerEpoch, cur.ProducerEpoch+1
		m.State, m.UpdateMs = PrepareAbort, nowMs
		return t.begin(m, kproto.CodeConcurrentTransactions, true)
	case Empty, CompleteCommit, CompleteAbort:
	default:
		return Step{Code: kproto.CodeInvalidTxnState}
	}
	m := cur
	m.TimeoutMs, m.UpdateMs, m.State, m.Partitions, m.StartMs = timeoutMs, nowMs, Empty, nil, -1
	if epochExhausted(cur.ProducerEpoch) && (!expect || expectEpoch == cur.ProducerEpoch) {
		pid, err := newPID()
		if err != nil {
			return Step{Code: kproto.CodeCoordinatorNotAvailable}
		}
		m.LastProducerID, m.ProducerID, m.ProducerEpoch = cur.ProducerID, pid, 0
		m.LastProducerEpoch = NoEpoch
		if expect {
			m.LastProducerEpoch = cur.ProducerEpoch
		}
		return t.begin(m, kproto.CodeNone, false)
	}
	switch {
	case !expect:
		m.ProducerEpoch, m.LastProducerEpoch = cur.ProducerEpoch+1, NoEpoch
	case cur.ProducerEpoch == NoEpoch || expectEpoch == cur.ProducerEpoch:
		m.ProducerEpoch, m.LastProducerEpoch = cur.ProducerEpoch+1, cur.ProducerEpoch
	case cur.LastProducerEpoch != NoEpoch && expectEpoch == cur.LastProducerEpoch:
		// A retry of the init that already bumped: the same epoch again.
	default:
		return Step{Code: CodeProducerFenced}
	}
	return t.begin(m, kproto.CodeNone, false)
}

// checkProducer is the producer id and epoch check of AddPartitions,
// AddOffsets, EndTxn and verification.
func (t *Txn) checkProducer(pid int64, epoch int16) kproto.ErrorCode {
	switch {
	case t == nil || t.Cur.State == Dead || pid != t.Cur.ProducerID:
		return kproto.CodeInvalidProducerIDMapping
	case epoch != t.Cur.ProducerEpoch:
		return CodeProducerFenced
	case t.Pending != nil, t.Cur.State == PrepareCommit, t.Cur.State == PrepareAbort:
		return kproto.CodeConcurrentTransactions
	}
	return kproto.CodeNone
}

// AddPartitions handles AddPartitionsToTxn (and AddOffsetsToTxn, with
// the group's partition of __consumer_offsets).
func (t *Txn) AddPartitions(pid int64, epoch int16, parts []TopicPartition, nowMs int64) Step {
	if code := t.checkProducer(pid, epoch); code != kproto.CodeNone {
		return Step{Code: code}
	}
	cur := t.Cur
	merged := slices.Clone(cur.Partitions)
	if cur.State != Ongoing {
		merged = nil
	}
	for _, p := range parts {
		if i, found := slices.BinarySearchFunc(merged, p, TopicPartition.compare); !found {
			merged = slices.Insert(merged, i, p)
		}
	}
	if cur.State == Ongoing && len(merged) == len(cur.Partitions) {
		return Step{Code: kproto.CodeNone}
	}
	m := cur
	if cur.State != Ongoing {
		m.StartMs = nowMs
	}
	m.State, m.Partitions, m.UpdateMs = Ongoing, merged, nowMs
	return t.begin(m, kproto.CodeNone, false)
}

// Verify answers a partition leader's AddPartitionsToTxn verify_only
// (KIP-890 part 1): whether each partition is in the ongoing
// transaction. code is the whole transaction's error; per partition it
// is NONE or INVALID_TXN_STATE.
func (t *Txn) Verify(pid int64, epoch int16, parts []TopicPartition) (code kproto.ErrorCode, each []kproto.ErrorCode) {
	probe := t
	if t != nil && t.Pending != nil && t.Pending.State == Ongoing {
		// More partitions being added: what is already in is answered.
		probe = &Txn{ID: t.ID, Cur: t.Cur}
	}
	if code := probe.checkProducer(pid, epoch); code != kproto.CodeNone {
		return code, nil
	}
	each = make([]kproto.ErrorCode, len(parts))
	for i, p := range parts {
		if _, found := slices.BinarySearchFunc(t.Cur.Partitions, p, TopicPartition.compare); !found || t.Cur.State != Ongoing {
			each[i] = kproto.CodeInvalidTxnState
		}
	}
	return kproto.CodeNone, each
}

// EndTxn handles EndTxn from the client.
func (t *Txn) EndTxn(pid int64, epoch int16, commit bool, nowMs int64) Step {
	if t == nil || t.Cur.State == Dead || pid != t.Cur.ProducerID {
		return Step{Code: kproto.CodeInvalidProducerIDMapping}
	}
	cur := t.Cur
	if epoch != cur.ProducerEpoch {
		return Step{Code: CodeProducerFenced}
	}
	if t.Pending != nil {
		return Step{Code: kproto.CodeConcurrentTransactions}
	}
	switch cur.State {
	case Ongoing:
		m := cur
		m.State, m.UpdateMs = PrepareAbort, nowMs
		if commit {
			m.State = PrepareCommit
		}
		return t.begin(m, kproto.CodeNone, true)
	case CompleteCommit:
		return Step{Code: ternary(commit, kproto.CodeNone, kproto.CodeInvalidTxnState)}
	case CompleteAbort:
		return Step{Code: ternary(!commit, kproto.CodeNone, kproto.CodeInvalidTxnState)}
	case PrepareCommit:
		return Step{Code: ternary(commit, kproto.CodeConcurrentTransactions, kproto.CodeInvalidTxnState)}
	case PrepareAbort:
		return Step{Code: ternary(!commit, kproto.CodeConcurrentTransactions, kproto.CodeInvalidTxnState)}
	}
	return Step{Code: kproto.CodeInvalidTxnState}
}

func ternary(c bool, a, b kproto.ErrorCode) kproto.ErrorCode {
	if c {
		return a
	}
	return b
}

// MarkersDone completes a Prepare state once every partition leader has
// written its marker.
func (t *Txn) MarkersDone(nowMs int64) Step {
	if t.Pending != nil || (t.Cur.State != PrepareCommit && t.Cur.State != PrepareAbort) {
		return Step{Code: kproto.CodeInvalidTxnState}
	}
	m := t.Cur
	m.State, m.Partitions, m.UpdateMs = CompleteAbort, nil, nowMs
	if t.Cur.State == PrepareCommit {
		m.State = CompleteCommit
	}
	return t.begin(m, kproto.CodeNone, false)
}

// Tick is the timer input: an Ongoing transaction past its timeout is
// aborted with the epoch bumped (the producer is fenced, as Kafka's
// abortTimedOutTransactions), and an idle id past
// transactional.id.expiration.ms becomes Dead (its tombstone written).
// A Step with no Write means nothing to do.
func (t *Txn) Tick(cfg Config, nowMs int64) Step {
	if t.Pending != nil {
		return Step{}
	}
	cur := t.Cur
	switch cur.State {
	case Ongoing:
		if nowMs < cur.StartMs+int64(cur.TimeoutMs) || cur.ProducerEpoch == math.MaxInt16 {
			return Step{}
		}
		m := cur
		m.LastProducerEpoch, m.ProducerEpoch = cur.ProducerEpoch, cur.ProducerEpoch+1
		m.State, m.UpdateMs = PrepareAbort, nowMs
		return t.begin(m, kproto.CodeNone, true)
	case Empty, CompleteCommit, CompleteAbort:
		if cfg.ExpirationMs <= 0 || nowMs < cur.UpdateMs+cfg.ExpirationMs {
			return Step{}
		}
		m := cur
		m.State, m.Partitions, m.UpdateMs = Dead, nil, nowMs
		return t.begin(m, kproto.CodeNone, false)
	}
	return Step{}
}
