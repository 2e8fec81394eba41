//go:build compat

package jaas

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// javaCases are JAAS texts whose reading by Parse and by Java's
// ConfigFile (testdata/ReadJAAS.java) must agree; names are the sections
// asked for.
var javaCases = []struct{ text, names string }{
	{zkServer, "Server Client Other"},
	{`Server { m.M required user_a="x y" user_b=plain; };`, "Server"},
	{`S { a.B REQUIRED k="v"; c.D Optional; };`, "S"},
	{`S { a.B sufficient k='single'; };`, "S"},
	{"S { a.B requisite k=\"tab\\there\" j=\"q\\\"uote\" l=\"back\\\\slash\"; };", "S"},
	{"// comment\nS { /* c */ a.B required k=v; // trailing\n};", "S"},
	{`S { a.B required k=v_1-2.3*; };`, "S"},
	{`S { a.B required k=v }`, "S"},
	{`S { a.B sometimes; };`, "S"},
	{`S { a.B required; }; S { c.D required; };`, "S"},
	{`S { a.B required k=; };`, "S"},
	{`S { };`, "S"},
}

func TestParseMatchesJava(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatal("java is not installed; the compat tests need a JDK (Debian: default-jdk-headless)")
	}
	for i, tc := range javaCases {
		p := filepath.Join(t.TempDir(), fmt.Sprintf("case%d.conf", i))
		if err := os.WriteFile(p, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(java, append([]string{filepath.Join("testdata", "ReadJAAS.java"), p}, strings.Fields(tc.names)...)...).Output()
		if err != nil {
			t.Fatalf("java: %v", err)
		}
		if got, want := render(tc.text, strings.Fields(tc.names)), strings.TrimSpace(string(out)); got != want {
			t.Errorf("%q:\nParse: %s\nJava:  %s", tc.text, got, want)
		}
	}
}

// render prints Parse's result as ReadJAAS.java prints Java's.
func render(text string, names []string) string {
	f, err := Parse(text)
	if err != nil {
		return "error"
	}
	var lines []string
	for _, n := range names {
		entries, ok := f[n]
		if !ok {
			lines = append(lines, "missing "+n)
			continue
		}
		lines = append(lines, "section "+n)
		for _, e := range entries {
			lines = append(lines, "module "+e.LoginModule+" "+e.Flag)
			var keys []string
			for k := range e.Options {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				lines = append(lines, "option "+k+"="+e.Options[k])
			}
		}
	}
	return strings.Join(lines, "\n")
}
