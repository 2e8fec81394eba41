package kworkload

import (
	"strings"
	"testing"
	"time"
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

// TestFirstAcks: failover time counts only records sent after the fault (a
// killed leader may still acknowledge earlier ones from its socket buffer),
// and waits for every partition asked.
func TestFirstAcks(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	p := &Producer{}
	p.mu.acks = []Ack{
		{Partition: 0, Sent: at(-2), At: at(-1)},
		{Partition: 0, Sent: at(-0.5), At: at(0.1)}, // sent before the fault
		{Partition: 1, Sent: at(0.5), At: at(3)},
		{Partition: 0, Sent: at(1), At: at(4)},
		{Partition: 1, Sent: at(2), At: at(5)},
	}
	got, ok := p.FirstAcks([]int32{0, 1}, t0)
	if !ok || got[0] != 4*time.Second || got[1] != 3*time.Second {
		t.Fatalf("FirstAcks = %v, %v; want p0 4s, p1 3s", got, ok)
	}
	if _, ok := p.FirstAcks([]int32{0, 2}, t0); ok {
		t.Fatal("FirstAcks ok without an acknowledgement on partition 2")
	}
	if d, err := p.WaitAcks([]int32{0, 1}, t0, time.Second); err != nil || d != 4*time.Second {
		t.Fatalf("WaitAcks = %v, %v; want the slowest, 4s", d, err)
	}
}
