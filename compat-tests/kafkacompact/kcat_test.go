//go:build compat

package kafkacompact

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// kcat runs kcat (librdkafka) against e with stdin in, and returns its
// output.
func kcat(t *testing.T, e *kafkaenv.Env, in string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{"-b", e.Addr, "-X", "socket.timeout.ms=10000"}, args...)
	cmd := exec.CommandContext(ctx, "kcat", args...)
	cmd.Stdin = strings.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

// TestKcatCompaction produces with kcat (lz4, idempotent) five updates of
// each of 2000 keys and NULL tombstones (-Z) for every seventh key to a
// compacted topic, then reads it back with kcat once the cleaner has
// cleaned: offsets strictly increase, every live key's last value is its
// latest, deleted keys are gone (delete.retention.ms=0, so the cleaning
// after the one that reached a tombstone drops it).
func TestKcatCompaction(t *testing.T) {
	e := kafkaenv.Start(t, kafkaenv.Configure(fastCleaner))
	const topic = "kcat-compacted"
	compactedTopic(t, e, topic, nil)
	m := model{}
	var in strings.Builder
	for round := range 5 {
		for k := range 2000 {
			v := fmt.Sprintf("v%d-%d", k, round)
			fmt.Fprintf(&in, "key-%d:%s\n", k, v)
			m[fmt.Sprintf("key-%d", k)] = []byte(v)
		}
	}
	for k := 0; k < 2000; k += 7 {
		fmt.Fprintf(&in, "key-%d:\n", k)
		m[fmt.Sprintf("key-%d", k)] = nil
	}
	produce := func(s string) {
		kcat(t, e, s, "-P", "-t", topic, "-K:", "-Z", "-z", "lz4", "-X", "enable.idempotence=true",
			"-X", "batch.num.messages=100", "-X", "linger.ms=5")
	}
	produce(in.String())
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		out := kcat(t, e, "", "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-Z", "-f", "%o %k %s\n")
		why := checkKcat(m, out)
		if why == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: %s", why)
		}
		// More updates of live keys make the log dirty and roll the
		// segment, so a later cleaning drops the expired tombstones.
		var nudge strings.Builder
		for j := range 300 {
			k := fmt.Sprintf("key-%d", 1+(i*300+j)%2000)
			if m[k] != nil {
				v := fmt.Sprintf("nudge-%d-%d-%s", i, j, strings.Repeat("n", 40))
				fmt.Fprintf(&nudge, "%s:%s\n", k, v)
				m[k] = []byte(v)
			}
		}
		produce(nudge.String())
		time.Sleep(100 * time.Millisecond)
	}
}

// checkKcat checks kcat's "%o %k %s" lines against the model.
func checkKcat(m model, out string) string {
	got := map[string]string{}
	last := int64(-1)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, l := range lines {
		f := strings.SplitN(l, " ", 3)
		if len(f) != 3 {
			return fmt.Sprintf("bad line %q", l)
		}
		off, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || off <= last {
			return fmt.Sprintf("offset %q after %d", f[0], last)
		}
		last = off
		got[f[1]] = f[2]
	}
	for k, v := range m {
		g, ok := got[k]
		switch {
		case v == nil && ok:
			return fmt.Sprintf("key %s deleted, read %q", k, g)
		case v != nil && g != string(v):
			return fmt.Sprintf("key %s: read %q, want %q", k, g, v)
		}
	}
	if len(lines) >= 10000 {
		return fmt.Sprintf("%d records read: not cleaned yet", len(lines))
	}
	return ""
}
