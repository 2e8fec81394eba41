package kafkatxnfaults

import (
	"strings"
	"testing"
)

// txns: producer 0's t0 committed (2 records), t1 aborted (1), t2 unknown (2).
func sample() []Txn {
	return []Txn{
		{ID: TxnID{0, 0}, Records: 2, Outcome: Committed, Phase: "none"},
		{ID: TxnID{0, 1}, Records: 1, Outcome: Aborted, Phase: "leader-kill"},
		{ID: TxnID{0, 2}, Records: 2, Outcome: Unknown, Phase: "leader-kill"},
	}
}

func recs(ids ...TxnID) []Rec {
	var out []Rec
	at := map[TxnID]int{}
	for k, id := range ids {
		out = append(out, Rec{ID: id, Index: at[id], Partition: int32(k % 2), Offset: int64(k)})
		at[id]++
	}
	return out
}

func TestCheck(t *testing.T) {
	t0, t1, t2 := TxnID{0, 0}, TxnID{0, 1}, TxnID{0, 2}
	cases := []struct {
		name    string
		h       History
		problem string // "" when the history is clean
	}{
		{"clean, unknown not visible", History{Txns: sample(), Final: recs(t0, t0),
			GroupOffsets: map[int]int64{0: 1}}, ""},
		{"clean, unknown visible", History{Txns: sample(), Final: recs(t0, t0, t2, t2),
			GroupOffsets: map[int]int64{0: 3}}, ""},
		{"aborted read live", History{Txns: sample(), Live: recs(t1), Final: recs(t0, t0),
			GroupOffsets: map[int]int64{0: 1}}, "live read aborted p0/t1"},
		{"aborted read final", History{Txns: sample(), Final: recs(t0, t0, t1),
			GroupOffsets: map[int]int64{0: 1}}, "final read aborted p0/t1"},
		{"committed missing", History{Txns: sample(), GroupOffsets: map[int]int64{0: 1}},
			"committed p0/t0 (2 records) not read"},
		{"partial", History{Txns: sample(), Final: recs(t0), GroupOffsets: map[int]int64{0: 1}},
			"p0/t0 (committed) read 1 of its 2"},
		{"partial unknown", History{Txns: sample(), Final: recs(t0, t0, t2),
			GroupOffsets: map[int]int64{0: 3}}, "p0/t2 (unknown) read 1 of its 2"},
		{"duplicated", History{Txns: sample(),
			Final:        append(recs(t0, t0), Rec{ID: t0, Index: 1, Offset: 9}),
			GroupOffsets: map[int]int64{0: 1}}, "p0/t0 record 1 read 2 times"},
		{"offset of an aborted txn", History{Txns: sample(), Final: recs(t0, t0),
			GroupOffsets: map[int]int64{0: 2}}, "group offset is 2, its last committed transaction gives 1"},
		{"offset of an unknown txn not visible", History{Txns: sample(), Final: recs(t0, t0),
			GroupOffsets: map[int]int64{0: 3}}, "group offset is 3"},
		{"offset missing", History{Txns: sample(), Final: recs(t0, t0)}, "group offset is 0"},
		{"foreign", History{Txns: sample(), Final: append(recs(t0, t0), Rec{ID: TxnID{7, 0}}),
			GroupOffsets: map[int]int64{0: 1}}, "p7/t0 at 0/0: no producer began it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := Check(tc.h)
			got := strings.Join(rep.Problems, "\n")
			if tc.problem == "" {
				if !rep.OK() || got != "" {
					t.Fatalf("clean history reported: %v\n%s", rep.Rows, got)
				}
				return
			}
			if rep.OK() || !strings.Contains(got, tc.problem) {
				t.Fatalf("want a problem containing %q, got OK=%v:\n%s", tc.problem, rep.OK(), got)
			}
		})
	}
}

func TestRows(t *testing.T) {
	rep := Check(History{Txns: sample(), Final: recs(TxnID{0, 0}, TxnID{0, 0}, TxnID{0, 2}, TxnID{0, 2}),
		GroupOffsets: map[int]int64{0: 3}})
	if len(rep.Rows) != 2 {
		t.Fatalf("rows %v", rep.Rows)
	}
	none, kill := rep.Rows[0], rep.Rows[1]
	if none.Phase != "none" || none.Committed != 1 || kill.Aborted != 1 || kill.Unknown != 1 || kill.Visible != 1 {
		t.Fatalf("rows %+v", rep.Rows)
	}
}

func TestRecordValue(t *testing.T) {
	id := TxnID{3, 41}
	got, i, n, ok := ParseRecord(RecordValue(id, 2, 5))
	if !ok || got != id || i != 2 || n != 5 {
		t.Fatalf("round trip: %v %d %d %v", got, i, n, ok)
	}
	for _, bad := range []string{"", "p1 t2 i3", "p1 t2 i3 nx", "q1 t2 i3 n4"} {
		if _, _, _, ok := ParseRecord(bad); ok {
			t.Errorf("ParseRecord(%q) ok", bad)
		}
	}
}
