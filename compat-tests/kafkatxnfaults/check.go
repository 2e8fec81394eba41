package kafkatxnfaults

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Outcome is what a producer was told of its transaction's end.
type Outcome int

const (
	// Committed: EndTransaction(commit) returned no error.
	Committed Outcome = iota
	// Aborted: the producer aborted (or gave up before asking to commit).
	// An abort that returned an error is still aborted: no commit was
	// ever asked for, so the coordinator can only abort it.
	Aborted
	// Unknown: EndTransaction(commit) returned an error; the transaction
	// may have committed or not, but it must be all or nothing.
	Unknown
)

func (o Outcome) String() string {
	return [...]string{"committed", "aborted", "unknown"}[o]
}

// TxnID names one transaction: producer p's seq'th (from 0).
type TxnID struct{ Producer, Seq int }

func (id TxnID) String() string { return fmt.Sprintf("p%d/t%d", id.Producer, id.Seq) }

// Txn is one transaction as its producer saw it.
type Txn struct {
	ID      TxnID
	Records int // records the producer sent in it
	Outcome Outcome
	Phase   string // the fault running when it began
}

// Rec is one record a read_committed consumer read.
type Rec struct {
	ID        TxnID
	Index     int // the record's index in its transaction
	Partition int32
	Offset    int64
}

// RecordValue encodes record i of n in transaction id.
func RecordValue(id TxnID, i, n int) string {
	return fmt.Sprintf("p%d t%d i%d n%d", id.Producer, id.Seq, i, n)
}

// ParseRecord is RecordValue's inverse.
func ParseRecord(v string) (id TxnID, i, n int, ok bool) {
	f := strings.Fields(v)
	if len(f) != 4 {
		return id, 0, 0, false
	}
	var nums [4]int
	for k, pre := range []string{"p", "t", "i", "n"} {
		s, has := strings.CutPrefix(f[k], pre)
		x, err := strconv.Atoi(s)
		if !has || err != nil {
			return id, 0, 0, false
		}
		nums[k] = x
	}
	return TxnID{nums[0], nums[1]}, nums[2], nums[3], true
}

// History is what the run observed: the producers' transactions, what a
// consumer read while the faults ran, what a fresh consumer read at the
// end, and each producer's group offset as OffsetFetch answers it at the
// end (absent: none committed). Producer p commits offset seq+1 for its
// group in transaction seq.
type History struct {
	Txns         []Txn
	Live, Final  []Rec
	GroupOffsets map[int]int64
}

// Row is one phase's counts.
type Row struct {
	Phase                                  string
	Committed, Aborted, Unknown, Visible   int // Visible: unknown ones read
	AbortedRead, Partial, Duplicated       int
	CommittedMissing, OffsetWrong, Foreign int
}

// Anomalies is the row's count of violations.
func (r Row) Anomalies() int {
	return r.AbortedRead + r.Partial + r.Duplicated + r.CommittedMissing + r.OffsetWrong + r.Foreign
}

func (r Row) String() string {
	return fmt.Sprintf("%-18s committed %4d aborted %4d unknown %3d (%d visible)  anomalies %d "+
		"(aborted-read %d partial %d duplicated %d committed-missing %d offset %d foreign %d)",
		r.Phase, r.Committed, r.Aborted, r.Unknown, r.Visible, r.Anomalies(),
		r.AbortedRead, r.Partial, r.Duplicated, r.CommittedMissing, r.OffsetWrong, r.Foreign)
}

// Report is Check's result: a row per phase in order of first
// appearance, and the first problems found.
type Report struct {
	Rows     []Row
	Problems []string
}

// OK reports whether no row has an anomaly.
func (r Report) OK() bool {
	for _, row := range r.Rows {
		if row.Anomalies() > 0 {
			return false
		}
	}
	return true
}

// Check holds the reads against the transactions:
//
//   - no record of an aborted transaction is ever read (live or final);
//   - every transaction read at the end is read whole: each of its
//     records exactly once (partial, duplicated otherwise) — across
//     partitions;
//   - every committed transaction is read at the end (committed-missing);
//   - an unknown one is read whole or not at all;
//   - each producer's group offset is that of its last transaction that
//     committed (a committed one, or an unknown one that was read), and
//     none when none did;
//   - every record read belongs to a transaction a producer began
//     (foreign otherwise).
func Check(h History) Report {
	c := newChecker(h.Txns)
	c.reads("live", h.Live, false)
	c.reads("final", h.Final, true)
	c.completeness()
	c.offsets(h.GroupOffsets)
	return Report{Rows: c.rows(), Problems: c.problems}
}

type checker struct {
	txns     map[TxnID]Txn
	phases   []string
	row      map[string]*Row
	final    map[TxnID]map[int]int // index → times read at the end
	problems []string
}

func newChecker(txns []Txn) *checker {
	c := &checker{txns: map[TxnID]Txn{}, row: map[string]*Row{}, final: map[TxnID]map[int]int{}}
	for _, t := range txns {
		c.txns[t.ID] = t
		r := c.rowOf(t.Phase)
		switch t.Outcome {
		case Committed:
			r.Committed++
		case Aborted:
			r.Aborted++
		case Unknown:
			r.Unknown++
		}
	}
	return c
}

func (c *checker) rowOf(phase string) *Row {
	if r, ok := c.row[phase]; ok {
		return r
	}
	c.phases = append(c.phases, phase)
	c.row[phase] = &Row{Phase: phase}
	return c.row[phase]
}

func (c *checker) problem(format string, args ...any) {
	if len(c.problems) < 20 {
		c.problems = append(c.problems, fmt.Sprintf(format, args...))
	}
}

func (c *checker) reads(who string, recs []Rec, final bool) {
	abortedSeen := map[TxnID]bool{}
	for _, r := range recs {
		t, ok := c.txns[r.ID]
		if !ok {
			c.rowOf("unattributed").Foreign++
			c.problem("%s read %v at %d/%d: no producer began it", who, r.ID, r.Partition, r.Offset)
			continue
		}
		if t.Outcome == Aborted && !abortedSeen[r.ID] {
			abortedSeen[r.ID] = true
			c.rowOf(t.Phase).AbortedRead++
			c.problem("%s read aborted %v record %d at %d/%d", who, r.ID, r.Index, r.Partition, r.Offset)
		}
		if final {
			if c.final[r.ID] == nil {
				c.final[r.ID] = map[int]int{}
			}
			c.final[r.ID][r.Index]++
		}
	}
}

func (c *checker) completeness() {
	for _, id := range c.sortedIDs() {
		t, got := c.txns[id], c.final[id]
		row := c.rowOf(t.Phase)
		if len(got) == 0 {
			if t.Outcome == Committed {
				row.CommittedMissing++
				c.problem("committed %v (%d records) not read", id, t.Records)
			}
			continue
		}
		if t.Outcome == Unknown {
			row.Visible++
		}
		if t.Outcome != Aborted && len(got) != t.Records {
			row.Partial++
			c.problem("%v (%s) read %d of its %d records", id, t.Outcome, len(got), t.Records)
		}
		for i, n := range got {
			if n > 1 {
				row.Duplicated++
				c.problem("%v record %d read %d times", id, i, n)
			}
		}
	}
}

func (c *checker) offsets(got map[int]int64) {
	want := map[int]int64{}
	phase := map[int]string{} // of each producer's last transaction
	for _, id := range c.sortedIDs() {
		t := c.txns[id]
		committed := t.Outcome == Committed || (t.Outcome == Unknown && len(c.final[id]) > 0)
		if committed {
			want[id.Producer] = int64(id.Seq + 1)
		}
		phase[id.Producer] = t.Phase
	}
	producers := map[int]bool{}
	for p := range want {
		producers[p] = true
	}
	for p := range got {
		producers[p] = true
	}
	for p := range producers {
		if got[p] != want[p] {
			c.rowOf(phase[p]).OffsetWrong++
			c.problem("producer %d's group offset is %d, its last committed transaction gives %d", p, got[p], want[p])
		}
	}
}

func (c *checker) sortedIDs() []TxnID {
	ids := make([]TxnID, 0, len(c.txns))
	for id := range c.txns {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b TxnID) int {
		if a.Producer != b.Producer {
			return a.Producer - b.Producer
		}
		return a.Seq - b.Seq
	})
	return ids
}

func (c *checker) rows() []Row {
	out := make([]Row, 0, len(c.phases))
	for _, p := range c.phases {
		out = append(out, *c.row[p])
	}
	return out
}
