//go:build compat

package properties

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestLoadMatchesJava loads the table cases and a few thousand random
// inputs made of the characters that matter (separators, whitespace,
// backslashes, line ends, comment marks, \u escapes) with Load and with
// java.util.Properties.load(Reader) in a JVM, and compares the results.
func TestLoadMatchesJava(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatal("java is not installed; the compat tests need a JDK (Debian: default-jdk-headless)")
	}
	dir := t.TempDir()
	var inputs []string
	for _, tc := range loadCases {
		inputs = append(inputs, tc.in)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		inputs = append(inputs, randomInput(rng))
	}
	for i, in := range inputs {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%05d", i)), []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(java, filepath.Join("testdata", "LoadProps.java"), dir).Output()
	if err != nil {
		// Running a .java source file needs the jdk.compiler module.
		t.Fatalf("java testdata/LoadProps.java (a JDK is needed, not only a JRE): %v", err)
	}
	javaResults := strings.Split(string(out), "file ")[1:]
	if len(javaResults) != len(inputs) {
		t.Fatalf("java printed %d results for %d inputs", len(javaResults), len(inputs))
	}
	for i, in := range inputs {
		want := strings.TrimPrefix(javaResults[i], fmt.Sprintf("%05d\n", i))
		if got := goResult(in); got != want {
			t.Errorf("input %q:\n Load gives %q\n Java gives %q", in, got, want)
		}
	}
}

// goResult prints Load's result in LoadProps.java's format.
func goResult(in string) string {
	props, err := Load(strings.NewReader(in))
	if err != nil {
		return "error\n"
	}
	lines := make([]string, 0, len(props))
	for _, p := range props {
		lines = append(lines, hexOf(p.Key)+" "+hexOf(p.Value)+"\n")
	}
	sort.Strings(lines)
	return strings.Join(lines, "")
}

func hexOf(s string) string { return fmt.Sprintf("x%x", s) }

var pieces = []string{"a", "b", "k", "=", ":", " ", "\t", "\f", "\\", "\\\\", "\n", "\r", "\r\n",
	"#", "!", `\u0041`, `\u00e9`, `\u12`, `\uzz12`, `\t`, `\n`, `\=`, `\ `, "é", "u", "0"}

func randomInput(rng *rand.Rand) string {
	var b strings.Builder
	for range 1 + rng.IntN(24) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}
