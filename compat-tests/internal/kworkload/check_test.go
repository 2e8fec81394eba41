package kworkload

import (
	"strings"
	"testing"
)

// log builds partition p's final log: values by sequence number, from
// offset 0.
func log(p int32, seqs ...int64) []Rec {
	var out []Rec
	for i, s := range seqs {
		out = append(out, Rec{Partition: p, Offset: int64(i), Value: Value(p, s)})
	}
	return out
}

func acks(p int32, seqOffs ...int64) []Ack {
	var out []Ack
	for i := 0; i+1 < len(seqOffs); i += 2 {
		out = append(out, Ack{Partition: p, Seq: seqOffs[i], Offset: seqOffs[i+1]})
	}
	return out
}

func cat[T any](xs ...[]T) []T {
	var out []T
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

func TestCheck(t *testing.T) {
	good := History{
		Acked: cat(acks(0, 0, 0, 1, 1, 2, 2), acks(1, 0, 0, 1, 1)),
		Seen:  cat(log(0, 0, 1), log(1, 0)),
		Final: cat(log(0, 0, 1, 2), log(1, 0, 1)),
	}
	for _, tc := range []struct {
		name string
		h    History
		want Counts
	}{
		{"clean", good, Counts{Acknowledged: 5}},
		{"unacknowledged record in the log once", History{
			Acked: acks(0, 0, 0, 2, 2),
			Final: log(0, 0, 1, 2),
		}, Counts{Acknowledged: 2}},
		{"acknowledged record lost", History{
			Acked: acks(0, 0, 0, 1, 1, 2, 2),
			Final: log(0, 0, 1),
		}, Counts{Acknowledged: 3, Lost: 1}},
		{"duplicate after a retry", History{
			Acked: acks(0, 0, 0, 1, 1),
			Final: log(0, 0, 1, 1),
		}, Counts{Acknowledged: 2, Duplicated: 1, Reordered: 1}},
		{"acknowledged at another offset (truncated, written again)", History{
			Acked: acks(0, 0, 0, 1, 1, 2, 1),
			Final: log(0, 0, 2),
		}, Counts{Acknowledged: 3, Lost: 1}},
		{"wrong offset", History{
			Acked: acks(0, 0, 0, 1, 5),
			Final: log(0, 0, 1),
		}, Counts{Acknowledged: 2, WrongOffset: 1}},
		{"reordered", History{
			Final: log(0, 0, 2, 1),
		}, Counts{Reordered: 1}},
		{"offset gap", History{
			Final: []Rec{{0, 0, Value(0, 0)}, {0, 2, Value(0, 1)}},
		}, Counts{Gaps: 1}},
		{"consumer saw a record that vanished", History{
			Seen:  log(0, 0, 1, 2),
			Final: log(0, 0, 1),
		}, Counts{Vanished: 1}},
		{"consumer saw a record replaced at its offset", History{
			Seen:  log(0, 0, 1),
			Final: log(0, 0, 7),
		}, Counts{Vanished: 1}},
		{"record of another partition", History{
			Final: []Rec{{0, 0, Value(1, 0)}},
		}, Counts{Foreign: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(tc.h)
			if got.Counts != tc.want {
				t.Fatalf("got  %v\nwant %v\nproblems:\n%s", got, Report{Counts: tc.want}, strings.Join(got.Problems, "\n"))
			}
			if got.OK() != (tc.want == Counts{Acknowledged: tc.want.Acknowledged}) {
				t.Fatalf("OK() = %v for %v", got.OK(), got)
			}
			if !got.OK() && len(got.Problems) == 0 {
				t.Fatal("a failed check described no problem")
			}
		})
	}
}
