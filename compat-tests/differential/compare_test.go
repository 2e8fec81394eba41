package differential

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestGenerateIsPureFunctionOfSeed(t *testing.T) {
	a, b := Generate(42, 500), Generate(42, 500)
	for i := range a {
		if a[i].String() != b[i].String() {
			t.Fatalf("op %d differs: %s vs %s", i, a[i], b[i])
		}
	}
	if c := Generate(43, 500); slices.EqualFunc(a, c, func(x, y Op) bool { return x.String() == y.String() }) {
		t.Fatal("seeds 42 and 43 gave the same sequence")
	}
	kinds := map[Kind]int{}
	for _, op := range Generate(1, 2000) {
		kinds[op.Kind]++
		if op.Ref >= 0 && op.Kind == OpMulti {
			t.Fatalf("multi with a ref: %s", op)
		}
	}
	for k := OpCreate; k <= OpReopen; k++ {
		if kinds[k] == 0 {
			t.Errorf("2000 ops have no %s", k)
		}
	}
}

func trace(name string, recs ...[]string) *Trace {
	t := &Trace{Name: name, Addr: "x"}
	for i, l := range recs {
		t.Records = append(t.Records, Record{Index: i, Op: "op", Lines: l})
	}
	return t
}

func TestCompareAndFormat(t *testing.T) {
	a := trace("apache", []string{"err: ok"}, []string{"err: ok", "data: \"x\"", "stat: s"}, []string{"err: ok"})
	b := trace("zkafka", []string{"err: ok"}, []string{"err: ok", "data: \"y\"", "stat: s"}, []string{"err: ok"})
	diffs := Compare(a, b, 10)
	if len(diffs) != 1 || diffs[0].Index != 1 {
		t.Fatalf("diffs = %+v", diffs)
	}
	out := Format(a, b, diffs)
	for _, want := range []string{"#1 op", "apache  data: \"x\"", "zkafka  data: \"y\"", "=       err: ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("Format lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "apache  data") > strings.Index(out, "zkafka  data") {
		t.Errorf("A's line must come first:\n%s", out)
	}
	// A run that stopped early differs at its first missing record.
	b.Records = b.Records[:1]
	b.Err = errors.New("boom")
	diffs = Compare(a, b, 10)
	if len(diffs) != 2 || !strings.Contains(strings.Join(diffs[1].B, ""), "boom") {
		t.Fatalf("diffs = %+v", diffs)
	}
	if got := Compare(a, a, 10); len(got) != 0 {
		t.Fatalf("a trace differs from itself: %+v", got)
	}
	if got := Compare(a, b, 1); len(got) != 1 {
		t.Fatalf("limit 1 gave %d diffs", len(got))
	}
}

func TestZxidRanksAndOwners(t *testing.T) {
	r := &runner{ranks: map[int64]int{}, owners: map[int64]string{77: "s1g0"}}
	// Different absolute zxids with the same relations normalize equally.
	x := []string{r.zxid(0x105), r.zxid(0x105), r.zxid(0x10a), r.zxid(0)}
	r2 := &runner{ranks: map[int64]int{}}
	y := []string{r2.zxid(0x7), r2.zxid(0x7), r2.zxid(0x9), r2.zxid(0)}
	if !slices.Equal(x, y) || !slices.Equal(x, []string{"Z1", "Z1", "Z2", "0"}) {
		t.Fatalf("ranks %v vs %v", x, y)
	}
	if r.owner(77) != "s1g0" || r.owner(0) != "0" || r.owner(5) != "unknown-session" {
		t.Fatal("owner labels")
	}
}
