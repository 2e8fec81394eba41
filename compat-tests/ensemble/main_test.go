package ensemble

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestMain builds the zkafka binary from this tree once (unless
// $ZKAFKA_BIN names one), so the processes never run a stale bin/zkafka.
func TestMain(m *testing.M) {
	if os.Getenv("ZKAFKA_BIN") == "" {
		dir, err := os.MkdirTemp("", "zkafka-ensemble-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		root, err := zkserver.ModuleRoot()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		bin := filepath.Join(dir, "zkafka")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/zkafka")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build ./cmd/zkafka: %v\n%s", err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
		os.Setenv("ZKAFKA_BIN", bin)
		code := run(m)
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(run(m))
}

// run runs the tests and prints what porcupine checked in all of them.
func run(m *testing.M) int {
	code := m.Run()
	if n := linChecked.histories.Load(); n > 0 {
		fmt.Printf("ensemble linearizability, all scenarios: %d histories, %d operations checked\n", n, linChecked.operations.Load())
	}
	return code
}
