// Package kworkload is the fault tests' workload and its checker: a
// franz-go idempotent producer with acks=all writing sequence-numbered
// records at a bounded rate, a consumer reading throughout, a fresh read of
// every partition at the end, and Check, which holds the three against
// each other.
//
// Each record's value is "p{partition}-{seq}" (seq counts from 0 per
// partition, in the order the producer sends). Check asserts, per
// partition:
//
//   - the final log's offsets run from its first offset with no gap;
//   - every acknowledged record is in the final log exactly once, at the
//     offset its acknowledgement gave (lost: absent; wrong offset:
//     elsewhere);
//   - no value appears twice (duplicated), acknowledged or not (a record
//     whose produce failed may be in the log, once);
//   - sequence numbers rise along the log (reordered otherwise);
//   - every (offset, value) a consumer saw during the run is in the final
//     log (vanished otherwise): what a consumer read was committed and
//     must survive any failover.
package kworkload

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Ack is one acknowledged record: its partition, offset and sequence
// number, when it was sent and when the acknowledgement arrived.
type Ack struct {
	Partition int32
	Offset    int64
	Seq       int64
	Sent, At  time.Time
}

// Rec is one record read back.
type Rec struct {
	Partition int32
	Offset    int64
	Value     string
}

// Value is the record value for partition p's sequence number seq.
func Value(p int32, seq int64) string {
	return "p" + strconv.Itoa(int(p)) + "-" + strconv.FormatInt(seq, 10)
}

// parseValue is Value's inverse.
func parseValue(v string) (int32, int64, bool) {
	rest, ok := strings.CutPrefix(v, "p")
	if !ok {
		return 0, 0, false
	}
	ps, ss, ok := strings.Cut(rest, "-")
	p, err1 := strconv.Atoi(ps)
	s, err2 := strconv.ParseInt(ss, 10, 64)
	return int32(p), s, ok && err1 == nil && err2 == nil
}

// History is what a run observed.
type History struct {
	Acked []Ack // acknowledged records
	Seen  []Rec // read by the consumer during the run
	Final []Rec // read by a fresh consumer at the end
}

// Counts are what Check counted.
type Counts struct {
	Acknowledged, Lost, WrongOffset, Duplicated, Reordered, Gaps, Vanished, Foreign int
}

// Report is Check's result; Problems describes the first few.
type Report struct {
	Counts
	Problems []string
}

// OK reports whether the history broke no rule.
func (r Report) OK() bool {
	return r.Lost+r.WrongOffset+r.Duplicated+r.Reordered+r.Gaps+r.Vanished+r.Foreign == 0
}

// String is the fault table's line.
func (r Report) String() string {
	return fmt.Sprintf("acknowledged %d, lost %d, duplicated %d, consumer-seen-then-vanished %d, wrong offset %d, reordered %d, offset gaps %d, foreign %d",
		r.Acknowledged, r.Lost, r.Duplicated, r.Vanished, r.WrongOffset, r.Reordered, r.Gaps, r.Foreign)
}

const maxProblems = 10

func (r *Report) problem(n *int, format string, args ...any) {
	*n++
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

type pos struct {
	p   int32
	off int64
}

// Check holds h against the rules in the package doc.
func Check(h History) Report {
	r := Report{Counts: Counts{Acknowledged: len(h.Acked)}}
	final := map[pos]string{}
	where := map[string][]int64{} // value → offsets in the final log
	byPart := map[int32][]Rec{}
	for _, rec := range h.Final {
		byPart[rec.Partition] = append(byPart[rec.Partition], rec)
	}
	for _, p := range slices.Sorted(maps.Keys(byPart)) {
		recs := byPart[p]
		slices.SortFunc(recs, func(a, b Rec) int { return int(a.Offset - b.Offset) })
		lastSeq := int64(-1)
		for i, rec := range recs {
			if i > 0 && rec.Offset != recs[i-1].Offset+1 {
				r.problem(&r.Gaps, "p%d: offset %d follows %d", p, rec.Offset, recs[i-1].Offset)
			}
			final[pos{p, rec.Offset}] = rec.Value
			where[rec.Value] = append(where[rec.Value], rec.Offset)
			vp, seq, ok := parseValue(rec.Value)
			if !ok || vp != p {
				r.problem(&r.Foreign, "p%d@%d: value %q not written to this partition", p, rec.Offset, rec.Value)
				continue
			}
			if seq <= lastSeq {
				r.problem(&r.Reordered, "p%d@%d: seq %d after seq %d", p, rec.Offset, seq, lastSeq)
			}
			lastSeq = max(lastSeq, seq)
		}
	}
	for v, offs := range where {
		if len(offs) > 1 {
			r.problem(&r.Duplicated, "%s at offsets %v", v, offs)
		}
	}
	for _, a := range h.Acked {
		v := Value(a.Partition, a.Seq)
		switch offs := where[v]; {
		case len(offs) == 0:
			r.problem(&r.Lost, "%s acknowledged at offset %d, not in the final log", v, a.Offset)
		case !slices.Contains(offs, a.Offset):
			r.problem(&r.WrongOffset, "%s acknowledged at offset %d, in the final log at %v", v, a.Offset, offs)
		}
	}
	seen := map[pos]bool{}
	for _, s := range h.Seen {
		k := pos{s.Partition, s.Offset}
		if seen[k] {
			continue // read again after a consumer restart
		}
		seen[k] = true
		if v, ok := final[k]; !ok || v != s.Value {
			r.problem(&r.Vanished, "p%d@%d: consumer saw %q, final log has %q", s.Partition, s.Offset, s.Value, v)
		}
	}
	return r
}
