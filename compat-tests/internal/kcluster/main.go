package kcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
)

// T is what a Cluster needs of its driver: testing.TB has it, and Runner
// gives it to a program.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
}

// Main runs a test binary's tests with $ZKAFKA_BIN set: when it is unset it
// builds ./cmd/zkafka from this tree once into a temporary directory, so the
// processes never run a stale bin/zkafka.
func Main(m *testing.M) {
	if os.Getenv("ZKAFKA_BIN") != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "zkafka-kcluster-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin, err := Build(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	os.Setenv("ZKAFKA_BIN", bin)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Build builds ./cmd/zkafka of the module above the working directory into
// dir and returns the binary's path.
func Build(dir string) (string, error) {
	root, err := benchkit.ModuleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "zkafka")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/zkafka")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/zkafka: %v\n%s", err, out)
	}
	return bin, nil
}

// Runner is T for a program: Fatalf prints and exits through benchkit.Exit
// (which runs the cleanups), Cleanup registers with benchkit.AtExit.
type Runner struct{}

func (Runner) Helper() {}

func (Runner) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kcluster: "+format+"\n", args...)
	benchkit.Exit(1)
}

func (Runner) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func (Runner) Cleanup(f func()) { benchkit.AtExit(f) }
