package raftnode

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

func ent(index, term uint64, data string) *raftpb.Entry {
	e := &raftpb.Entry{Index: new(index), Term: new(term), Type: raftpb.EntryNormal.Enum()}
	if data != "" {
		e.Data = []byte(data)
	}
	return e
}

// TestSegLogMatchesMemLog runs the same random operations (appends,
// conflicting appends, compactions, resets) on the segment-backed log and
// on the in-memory model, reopening the segment log now and then, and
// checks that they always hold the same entries.
func TestSegLogMatchesMemLog(t *testing.T) {
	dir := t.TempDir()
	open := func() *segLog {
		l, err := openSegLog(dir, 2<<10, nil, testLogger())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	seg, model := open(), newMemLog()
	defer func() { seg.Close() }()
	rng := rand.New(rand.NewPCG(1, 2))
	term := uint64(1)
	for step := range 400 {
		first, next := model.FirstIndex(), model.NextIndex()
		var err, merr error
		switch op := rng.IntN(10); {
		case op < 6: // append, sometimes over a suffix
			at := next
			if next > first && rng.IntN(3) == 0 {
				at = first + uint64(rng.IntN(int(next-first)))
				term++
			}
			var ents []*raftpb.Entry
			for i := range uint64(1 + rng.IntN(8)) {
				ents = append(ents, ent(at+i, term, fmt.Sprintf("e%d-%d", step, i)))
			}
			err, merr = seg.Append(ents), model.Append(ents)
		case op < 8 && next > first:
			at := first + uint64(rng.IntN(int(next-first)+1))
			err, merr = seg.Compact(at), model.Compact(at)
		case op == 8:
			at := next + uint64(rng.IntN(5))
			err, merr = seg.Reset(at), model.Reset(at)
		default:
			if err := seg.Sync(); err != nil {
				t.Fatal(err)
			}
			seg.Close()
			seg = open()
		}
		if err != nil || merr != nil {
			t.Fatalf("step %d: seg %v, model %v", step, err, merr)
		}
		if seg.FirstIndex() != model.FirstIndex() || seg.NextIndex() != model.NextIndex() {
			t.Fatalf("step %d: seg [%d, %d), model [%d, %d)", step, seg.FirstIndex(), seg.NextIndex(), model.FirstIndex(), model.NextIndex())
		}
		got, err := seg.Entries(seg.FirstIndex(), seg.NextIndex())
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		want, _ := model.Entries(model.FirstIndex(), model.NextIndex())
		for i := range want {
			if got[i].GetIndex() != want[i].GetIndex() || got[i].GetTerm() != want[i].GetTerm() || string(got[i].GetData()) != string(want[i].GetData()) {
				t.Fatalf("step %d: entry %d: seg %v, model %v", step, i, got[i], want[i])
			}
		}
	}
}

func TestStateFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	st := &persistedState{Term: 7, Vote: 2, Commit: 99, Voters: []uint64{1, 2, 3}, Learners: []uint64{4}}
	if err := writeState(dir, st); err != nil {
		t.Fatal(err)
	}
	got, err := readState(dir)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(st) {
		t.Fatalf("read %+v, %v; want %+v", got, err, st)
	}
	b := st.marshal()
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x10
		if _, err := unmarshalState(c); err == nil {
			t.Fatalf("a flipped bit at %d went unnoticed", i)
		}
	}
}
