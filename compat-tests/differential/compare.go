package differential

import (
	"fmt"
	"slices"
	"strings"
)

// Diff is one operation whose records differ.
type Diff struct {
	Index int
	Op    string
	A, B  []string // the two records' lines; nil when that run has no record
}

// Compare returns up to limit differing records, in operation order. A run
// that stopped early differs at its first missing record.
func Compare(a, b *Trace, limit int) []Diff {
	var diffs []Diff
	n := max(len(a.Records), len(b.Records))
	for i := 0; i < n && len(diffs) < limit; i++ {
		var ra, rb *Record
		if i < len(a.Records) {
			ra = &a.Records[i]
		}
		if i < len(b.Records) {
			rb = &b.Records[i]
		}
		switch {
		case ra != nil && rb != nil:
			if !slices.Equal(ra.Lines, rb.Lines) {
				diffs = append(diffs, Diff{Index: ra.Index, Op: ra.Op, A: ra.Lines, B: rb.Lines})
			}
		case ra != nil:
			diffs = append(diffs, Diff{Index: ra.Index, Op: ra.Op, A: ra.Lines, B: []string{stopped(b)}})
		case rb != nil:
			diffs = append(diffs, Diff{Index: rb.Index, Op: rb.Op, A: []string{stopped(a)}, B: rb.Lines})
		}
	}
	if len(diffs) < limit && len(a.Records) == len(b.Records) && (a.Err == nil) != (b.Err == nil) {
		diffs = append(diffs, Diff{Index: len(a.Records), Op: "(end of run)", A: []string{stopped(a)}, B: []string{stopped(b)}})
	}
	return diffs
}

func stopped(t *Trace) string {
	if t.Err != nil {
		return "(no record: run stopped: " + t.Err.Error() + ")"
	}
	return "(no record: run finished)"
}

// Format renders diffs readably: for each differing operation the lines
// only one side has, marked with that side's name, and the common lines
// marked "=".
func Format(a, b *Trace, diffs []Diff) string {
	var s strings.Builder
	wa := max(len(a.Name), len(b.Name), 1)
	fmt.Fprintf(&s, "%d difference(s) between %s (%s) and %s (%s), first ones:\n", len(diffs), a.Name, a.Addr, b.Name, b.Addr)
	for _, d := range diffs {
		fmt.Fprintf(&s, "\n#%d %s\n", d.Index, d.Op)
		for _, l := range lineDiff(d.A, d.B) {
			switch l.side {
			case 0:
				fmt.Fprintf(&s, "  %-*s  %s\n", wa, "=", l.text)
			case 1:
				fmt.Fprintf(&s, "  %-*s  %s\n", wa, a.Name, l.text)
			case 2:
				fmt.Fprintf(&s, "  %-*s  %s\n", wa, b.Name, l.text)
			}
		}
	}
	return s.String()
}

type diffLine struct {
	side int // 0 both, 1 only A, 2 only B
	text string
}

// lineDiff is a longest-common-subsequence diff; records are short, and the
// final tree is capped, so O(n·m) is fine. Long equal runs are elided.
func lineDiff(a, b []string) []diffLine {
	n, m := len(a), len(b)
	if n*m > 4_000_000 {
		var out []diffLine
		for _, l := range a {
			out = append(out, diffLine{1, l})
		}
		for _, l := range b {
			out = append(out, diffLine{2, l})
		}
		return out
	}
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, diffLine{0, a[i]})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, diffLine{1, a[i]})
			i++
		default:
			out = append(out, diffLine{2, b[j]})
			j++
		}
	}
	return elide(out, 3)
}

// elide keeps at most ctx equal lines around each change.
func elide(in []diffLine, ctx int) []diffLine {
	keep := make([]bool, len(in))
	for i, l := range in {
		if l.side != 0 {
			for k := max(0, i-ctx); k <= min(len(in)-1, i+ctx); k++ {
				keep[k] = true
			}
		}
	}
	var out []diffLine
	skipped := 0
	for i, l := range in {
		if keep[i] {
			if skipped > 0 {
				out = append(out, diffLine{0, fmt.Sprintf("... %d equal line(s)", skipped)})
				skipped = 0
			}
			out = append(out, l)
		} else {
			skipped++
		}
	}
	if skipped > 0 {
		out = append(out, diffLine{0, fmt.Sprintf("... %d equal line(s)", skipped)})
	}
	return out
}
