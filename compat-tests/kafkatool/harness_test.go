package kafkatool

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkafka/zkafka/cmd/zkafka/kafkatool"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/internal/faultproxy"
)

func TestMain(m *testing.M) { kafkaenv.Main(m) }

// safeBuffer is a bytes.Buffer that a running command writes while the
// test reads it.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// root is a root command as cmd/zkafka builds it, with the tools added.
func root() *cobra.Command {
	r := &cobra.Command{Use: "zkafka", SilenceUsage: true, SilenceErrors: true}
	r.AddCommand(kafkatool.Commands()...)
	return r
}

// runCtx runs one command line with stdin and returns what it printed.
func runCtx(ctx context.Context, stdin string, out io.Writer, args ...string) (string, error) {
	return runIn(ctx, strings.NewReader(stdin), out, args...)
}

// runIn is runCtx with any reader as stdin.
func runIn(ctx context.Context, stdin io.Reader, out io.Writer, args ...string) (string, error) {
	var errb bytes.Buffer
	err := runWith(ctx, stdin, out, &errb, args...)
	return errb.String(), err
}

// runWith runs one command line with its three streams.
func runWith(ctx context.Context, stdin io.Reader, out, errw io.Writer, args ...string) error {
	r := root()
	r.SetArgs(args)
	r.SetIn(stdin)
	r.SetOut(out)
	r.SetErr(errw)
	return r.ExecuteContext(ctx)
}

// run runs a command that must succeed within 30 s and returns its stdout.
func run(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	stderr, err := runCtx(kafkaenv.Context(t, 30*time.Second), stdin, &out, args...)
	if err != nil {
		t.Fatalf("zkafka %s: %v (stderr %q)", strings.Join(args, " "), err, stderr)
	}
	return out.String()
}

// runErr runs a command that must fail and returns its error.
func runErr(t *testing.T, args ...string) error {
	t.Helper()
	var out bytes.Buffer
	_, err := runCtx(kafkaenv.Context(t, 30*time.Second), "", &out, args...)
	if err == nil {
		t.Fatalf("zkafka %s succeeded, want an error; printed %q", strings.Join(args, " "), out.String())
	}
	return err
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	return v
}

// zkSpec is --zookeeper for the broker of e.
func zkSpec(e *kafkaenv.Env) string { return kafkaenv.ZooKeeper() + e.Chroot }

// checkFor polls cond every 20 ms until it holds or d has passed.
func checkFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startProxy is a faultproxy.Proxy to target, closed at the end of the
// test: Cut(faultproxy.Refuse) partitions (every connection reset, new
// ones refused) until Heal; Close cuts everything for good, as a crashed
// process would.
func startProxy(t *testing.T, target string) *faultproxy.Proxy {
	p, err := faultproxy.New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
