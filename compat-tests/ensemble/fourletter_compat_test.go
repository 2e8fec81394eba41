//go:build compat

package ensemble

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/differential"
	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestEnsembleFourLetterWords compares every four-letter word of the
// leader, a follower and the observer of an Apache ZooKeeper ensemble (3
// voters, 1 observer) and of a zkafka ensemble alike, in the same state: the
// same writes, one session on each of the three servers with the same
// watches (the per-server values, such as connections and watches, are then
// comparable as values).
// The answers are normalized as in the standalone differential run.
func TestEnsembleFourLetterWords(t *testing.T) {
	opts := zkserver.EnsembleOptions{
		Options: zkserver.Options{ExtendedTypes: true, ContainerCheckInterval: time.Hour, StartTimeout: 60 * time.Second,
			FourLetterWords: differential.FourLetterWords},
		Voters: 3, Observers: 1,
	}
	a := zkserver.NewApacheEnsemble(t, opts)
	b := zkserver.NewZkafkaEnsemble(t, opts)
	a.StartAll()
	b.StartAll()
	ra := fourLetterState(t, a)
	rb := fourLetterState(t, b)
	var diffs []string
	for _, role := range []string{"leader", "follower", "observer"} {
		for _, w := range differential.FourLetterWords {
			la := ensembleNormalize(w, differential.NormalizeFourLetterWord(w, ra.answers[role][w], ra.label))
			lb := ensembleNormalize(w, differential.NormalizeFourLetterWord(w, rb.answers[role][w], rb.label))
			if os.Getenv("ZKDIFF_DUMP") == "raw" && w != "mntr" {
				fmt.Printf("==== %s %s\n--- apache\n%s\n--- zkafka\n%s\n", role, w, ra.answers[role][w], rb.answers[role][w])
			} else if os.Getenv("ZKDIFF_DUMP") != "" {
				fmt.Printf("==== %s %s\n--- apache\n%s\n--- zkafka\n%s\n", role, w, strings.Join(la, "\n"), strings.Join(lb, "\n"))
			}
			if !slices.Equal(la, lb) {
				diffs = append(diffs, fmt.Sprintf("%s %s:\n  apache: %q\n  zkafka: %q", role, w, onlyIn(la, lb), onlyIn(lb, la)))
			}
		}
	}
	if len(diffs) > 0 {
		t.Fatalf("%d four-letter word(s) differ (lines only on one side):\n%s", len(diffs), strings.Join(diffs, "\n"))
	}
}

// ensembleNormalize hides, on top of the standalone normalization, what
// legitimately differs between two ensembles in the same state: which
// server id leads (conf's serverId, and the learner ids in the leader's
// per-learner mntr keys), and the writes of /zookeeper/config
// (the "zookeeper" namespace: a server writes it when it loads the
// configuration, and again when it syncs from the leader by snapshot; its
// length follows the port numbers).
func ensembleNormalize(word string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		l = reServerID.ReplaceAllString(l, "serverId=<id>")
		l = reLearnerSid.ReplaceAllString(l, "${1}<sid>$2")
		out[i] = reConfigWrites.ReplaceAllString(l, "${1}<n>")
	}
	if word == "mntr" {
		slices.Sort(out) // sorted again once the learner ids are gone
	}
	return out
}

var (
	reServerID     = regexp.MustCompile(`^serverId=\d+$`)
	reLearnerSid   = regexp.MustCompile(`^(zk_[a-z0-9]+_)\d+(_learner_handler_)`)
	reConfigWrites = regexp.MustCompile(`^(zk_(cnt|sum)_zookeeper_write_per_namespace\t)\d+$`)
)

// onlyIn returns the lines of a that b lacks.
func onlyIn(a, b []string) []string {
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, l)
		}
	}
	return out
}

type ensembleAnswers struct {
	answers map[string]map[string]string // role -> word -> answer
	owners  map[int64]string
}

func (r ensembleAnswers) label(id int64) string {
	if id == 0 {
		return "0x0"
	}
	if l, ok := r.owners[id]; ok {
		return l
	}
	return "unknown-session"
}

// fourLetterState puts e in the state the test compares and asks the
// leader and the follower with the lower id every word.
func fourLetterState(t *testing.T, e *zkserver.Ensemble) ensembleAnswers {
	t.Helper()
	leader := e.WaitLeader(60 * time.Second)
	var follower *zkserver.Server
	for _, s := range e.Servers[:3] {
		if s != leader {
			follower = s
			break
		}
	}
	observer := e.Servers[3]
	r := ensembleAnswers{answers: map[string]map[string]string{}, owners: map[int64]string{}}
	acl := zk.WorldACL(zk.PermAll)
	cl := dial(t, []string{leader.Addr()}, 10*time.Second)
	cf := dial(t, []string{follower.Addr()}, 10*time.Second)
	co := dial(t, []string{observer.Addr()}, 10*time.Second)
	r.owners[cl.SessionID()], r.owners[cf.SessionID()], r.owners[co.SessionID()] = "on-leader", "on-follower", "on-observer"
	for _, step := range []func() error{
		func() error { _, err := cl.Create("/a", []byte("hello"), 0, acl); return err },
		func() error { _, err := cl.Create("/a/l", []byte("x"), zk.FlagEphemeral, acl); return err },
		func() error { _, err := cf.Create("/b", nil, 0, acl); return err },
		func() error { _, err := cf.Create("/b/f", []byte("yy"), zk.FlagEphemeral, acl); return err },
		func() error { _, err := cf.Sync("/"); return err },
		func() error { _, _, _, err := cl.GetW("/a"); return err },
		func() error { _, _, _, err := cl.ChildrenW("/b"); return err },
		func() error { _, _, _, err := cf.ExistsW("/nope"); return err },
		func() error { _, _, _, err := cf.GetW("/a/l"); return err },
		func() error { _, _, _, err := cf.ChildrenW("/a"); return err },
		func() error { _, err := co.Sync("/"); return err },
		func() error { _, _, _, err := co.GetW("/b/f"); return err },
		func() error { _, err := co.Create("/c", []byte("o"), zk.FlagEphemeral, acl); return err },
		func() error { _, err := cl.Sync("/"); return err },
		func() error { _, err := cf.Sync("/"); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("%s ensemble: %v", e.Servers[0].Kind(), err)
		}
	}
	for role, s := range map[string]*zkserver.Server{"leader": leader, "follower": follower, "observer": observer} {
		r.answers[role] = map[string]string{}
		for _, w := range differential.FourLetterWords {
			out, err := zkserver.FourLetterWord(s.Addr(), w, 5*time.Second)
			if err != nil {
				t.Fatalf("%s %s %s: %v", s.Kind(), role, w, err)
			}
			r.answers[role][w] = out
		}
	}
	return r
}
