//go:build compat

package differential_test

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/differential"
	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// The run every test uses unless ZKDIFF_SEED / ZKDIFF_OPS override it.
const (
	defaultSeed = 20261129
	defaultOps  = 2000
)

func seedAndOps(t *testing.T) (uint64, int) {
	seed, n := uint64(defaultSeed), defaultOps
	if v := os.Getenv("ZKDIFF_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("ZKDIFF_SEED: %v", err)
		}
		seed = s
	}
	if v := os.Getenv("ZKDIFF_OPS"); v != "" {
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 || k > 100000 {
			t.Fatalf("ZKDIFF_OPS=%q: want 1..100000", v)
		}
		n = k
	}
	t.Logf("seed %d, %d ops (ZKDIFF_SEED, ZKDIFF_OPS)", seed, n)
	return seed, n
}

// serverOpts: TTL nodes on, containers never reaped during a run, and every
// four-letter word the run compares whitelisted.
var serverOpts = zkserver.Options{ExtendedTypes: true, ContainerCheckInterval: time.Hour, FourLetterWords: differential.FourLetterWords}

// with4lw is the run's configuration: the four-letter words are compared at
// the end of every run.
var with4lw = differential.Config{FourLetterWords: differential.FourLetterWords}

func run(t *testing.T, a, b *zkserver.Server, ops []differential.Op, cfgA, cfgB differential.Config) (*differential.Trace, *differential.Trace, []differential.Diff) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ta, tb := differential.RunPair(ctx, a.Kind()+"-A", a.Addr(), b.Kind()+"-B", b.Addr(), ops, cfgA, cfgB)
	t.Logf("%s: %d records in %v; %s: %d records in %v", ta.Name, len(ta.Records), ta.Duration, tb.Name, len(tb.Records), tb.Duration)
	return ta, tb, differential.Compare(ta, tb, 30)
}

// TestApacheVsApache: the harness itself must see no difference between two
// Apache ZooKeeper servers. Any difference here is a harness bug (some
// nondeterminism leaking into a record).
func TestApacheVsApache(t *testing.T) {
	seed, n := seedAndOps(t)
	a := zkserver.StartApache(t, serverOpts)
	b := zkserver.StartApache(t, serverOpts)
	ops := differential.Generate(seed, n)
	ta, tb, diffs := run(t, a, b, ops, with4lw, with4lw)
	if ta.Err != nil || tb.Err != nil {
		t.Fatalf("run stopped: A: %v; B: %v", ta.Err, tb.Err)
	}
	if len(diffs) > 0 {
		t.Fatalf("Apache vs Apache must not differ:\n%s", differential.Format(ta, tb, diffs))
	}
	dumpTrace(t, "", ta)
	if seed == defaultSeed && n == defaultOps {
		checkCoverage(t, ta)
	}
}

// dumpTrace writes a trace's records to $ZKDIFF_DUMP (plus suffix), when set.
func dumpTrace(t *testing.T, suffix string, tr *differential.Trace) {
	t.Helper()
	if os.Getenv("ZKDIFF_DUMP") == "" {
		return
	}
	f, err := os.Create(os.Getenv("ZKDIFF_DUMP") + suffix)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, r := range tr.Records {
		f.WriteString("#" + strconv.Itoa(r.Index) + " " + r.Op + "\n")
		for _, l := range r.Lines {
			f.WriteString("    " + l + "\n")
		}
	}
}

// checkCoverage asserts that the default run reached the outcomes it exists
// to compare, so a generator change cannot quietly make it trivial. (Other
// seeds may miss the rare ones, such as NoChildrenForEphemerals.)
func checkCoverage(t *testing.T, tr *differential.Trace) {
	t.Helper()
	var all strings.Builder
	for _, r := range tr.Records {
		all.WriteString(strings.Join(r.Lines, "\n"))
		all.WriteString("\n")
	}
	s := all.String()
	for _, want := range []string{
		"err: ok", zk.ErrNoNode.Error(), zk.ErrNodeExists.Error(), zk.ErrBadVersion.Error(),
		zk.ErrNotEmpty.Error(), zk.ErrNoAuth.Error(), zk.ErrNoChildrenForEphemerals.Error(),
		zk.ErrInvalidACL.Error(), zk.ErrBadArguments.Error(),
		"events ", "NodeCreated", "NodeDeleted", "NodeDataChanged", "NodeChildrenChanged",
		"owner=s", "closed s", "[1] err:",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the run never produced %q", want)
		}
	}
}

// TestApacheVsZkafka is the point of the package: zkafka's ZooKeeper server
// must answer exactly as Apache ZooKeeper does.
func TestApacheVsZkafka(t *testing.T) {
	seed, n := seedAndOps(t)
	a := zkserver.StartApache(t, serverOpts)
	b := zkserver.StartZkafka(t, serverOpts)
	ops := differential.Generate(seed, n)
	ta, tb, diffs := run(t, a, b, ops, with4lw, with4lw)
	dumpTrace(t, ".apache", ta)
	dumpTrace(t, ".zkafka", tb)
	if len(diffs) > 0 {
		t.Fatalf("zkafka differs from Apache ZooKeeper (seed %d):\n%s", seed, differential.Format(ta, tb, diffs))
	}
	if ta.Err != nil {
		t.Fatalf("the Apache run stopped: %v", ta.Err)
	}
}

// alterOneGet changes the data of the k-th successful Get on one session.
type alterOneGet struct {
	differential.Conn
	k, seen *int
}

func (c alterOneGet) Get(p string) ([]byte, *zk.Stat, error) {
	d, st, err := c.Conn.Get(p)
	if err == nil {
		*c.seen++
		if *c.seen == *c.k {
			d = append([]byte("ALTERED-"), d...)
		}
	}
	return d, st, err
}

// bumpSetVersion reports every Set's new version one too high.
type bumpSetVersion struct{ differential.Conn }

func (c bumpSetVersion) Set(p string, d []byte, v int32) (*zk.Stat, error) {
	st, err := c.Conn.Set(p, d, v)
	if st != nil {
		cp := *st
		cp.Version++
		st = &cp
	}
	return st, err
}

// TestSelfTestCatchesDifferences proves the comparison can fail: the same
// Apache server pair, but one side's replies altered by a wrapper, and a
// second pair that really differs (TTL nodes disabled on one side).
func TestSelfTestCatchesDifferences(t *testing.T) {
	a := zkserver.StartApache(t, serverOpts)
	b := zkserver.StartApache(t, serverOpts)
	ops := differential.Generate(7, 400)

	t.Run("altered get data", func(t *testing.T) {
		k, seen := 3, 0
		cfgB := differential.Config{WrapConn: func(slot, gen int, c differential.Conn) differential.Conn {
			if slot == 1 && gen == 0 {
				return alterOneGet{Conn: c, k: &k, seen: &seen}
			}
			return c
		}}
		// Fresh servers per subtest: the first run leaves state behind.
		a, b := zkserver.StartApache(t, serverOpts), zkserver.StartApache(t, serverOpts)
		ta, tb, diffs := run(t, a, b, ops, differential.Config{}, cfgB)
		if seen < k {
			t.Fatalf("only %d successful gets on s1g0; pick another seed", seen)
		}
		if len(diffs) != 1 {
			t.Fatalf("want exactly 1 difference, got %d:\n%s", len(diffs), differential.Format(ta, tb, diffs))
		}
		out := differential.Format(ta, tb, diffs)
		if !strings.Contains(out, "ALTERED-") || !strings.Contains(out, "s1 get") {
			t.Fatalf("the diff does not show the altered reply:\n%s", out)
		}
		t.Logf("as expected:\n%s", out)
	})

	t.Run("altered set version", func(t *testing.T) {
		cfgB := differential.Config{WrapConn: func(slot, gen int, c differential.Conn) differential.Conn { return bumpSetVersion{c} }}
		ta, tb, diffs := run(t, a, b, ops, differential.Config{}, cfgB)
		if len(diffs) == 0 {
			t.Fatal("a wrong version in every set reply went unnoticed")
		}
		if out := differential.Format(ta, tb, diffs); !strings.Contains(out, " set ") || !strings.Contains(out, "version=") {
			t.Fatalf("the diff does not point at a set:\n%s", out)
		}
	})

	t.Run("altered four-letter words", func(t *testing.T) {
		// One value compared as a value, one key gone, one line of a
		// shape compared by shape: three differences, each shown.
		cfgB := with4lw
		cfgB.AlterFourLetterWord = func(word, answer string) string {
			switch word {
			case "mntr":
				answer = regexp.MustCompile(`(?m)^zk_approximate_data_size\t.*\n`).ReplaceAllString(answer, "")
				return regexp.MustCompile(`(?m)^zk_znode_count\t(\d+)`).ReplaceAllString(answer, "zk_znode_count\t${1}0")
			case "srvr":
				return strings.Replace(answer, "Latency min/avg/max: ", "Latency min/avg/max: x", 1)
			}
			return answer
		}
		a, b := zkserver.StartApache(t, serverOpts), zkserver.StartApache(t, serverOpts)
		ta, tb, diffs := run(t, a, b, differential.Generate(7, 100), with4lw, cfgB)
		out := differential.Format(ta, tb, diffs)
		if len(diffs) != 2 {
			t.Fatalf("want differences in exactly mntr and srvr, got %d:\n%s", len(diffs), out)
		}
		for _, want := range []string{"4lw mntr", "4lw srvr", "zk_approximate_data_size", "zk_znode_count", "malformed(<min>/<avg>/<max>)"} {
			if !strings.Contains(out, want) {
				t.Errorf("the diff does not show %q:\n%s", want, out)
			}
		}
		t.Logf("as expected:\n%s", out)
	})

	t.Run("server without TTL", func(t *testing.T) {
		a := zkserver.StartApache(t, serverOpts)
		noTTL := serverOpts
		noTTL.ExtendedTypes = false
		b := zkserver.StartApache(t, noTTL)
		ta, tb, diffs := run(t, a, b, ops, differential.Config{}, differential.Config{})
		out := differential.Format(ta, tb, diffs)
		if len(diffs) == 0 || !strings.Contains(out, "mode=ttl") {
			t.Fatalf("TTL nodes on one side only went unnoticed:\n%s", out)
		}
		t.Logf("as expected, first difference:\n%s", differential.Format(ta, tb, diffs[:1]))
	})
}
