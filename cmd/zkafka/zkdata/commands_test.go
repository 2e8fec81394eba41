package zkdata

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

const fixture = "../../../store/apachezk/testdata/apache38"

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "zkafka", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(Commands()...)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func zooCfg(t *testing.T) (cfg, data string) {
	dir := t.TempDir()
	data = filepath.Join(dir, "data")
	cfg = filepath.Join(dir, "zoo.cfg")
	os.WriteFile(cfg, []byte(fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=2181\n", data)), 0o644)
	return cfg, data
}

func copyFixture(t *testing.T, names ...string) string {
	dir := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(fixture, n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	return dir
}

// TestImportExportCommands: zk-import then zk-export through the commands.
func TestImportExportCommands(t *testing.T) {
	cfg, _ := zooCfg(t)
	out, err := run(t, "zk-import", "--from", fixture, cfg)
	if err != nil || !strings.Contains(out, "imported 1") || !strings.Contains(out, "torn log") || !strings.Contains(out, "snapshot.8b") {
		t.Fatalf("zk-import: %v\n%s", err, out)
	}
	if out, err := run(t, "zk-import", "--from", fixture, cfg); err == nil {
		t.Fatalf("a second zk-import into the same data succeeded:\n%s", out)
	}
	to := t.TempDir()
	out, err = run(t, "zk-export", "--to", to, cfg)
	if err != nil || !strings.Contains(out, "exported") {
		t.Fatalf("zk-export: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(to, "version-2", "snapshot.8b")); err != nil {
		t.Errorf("no snapshot.8b (the imported zxid: the server never ran): %v\n%s", err, out)
	}
	if _, err := run(t, "zk-export", "--to", to, cfg); err == nil {
		t.Errorf("zk-export over an existing snapshot succeeded")
	}
}

// TestImportDamagedLeavesNothing: a checksum error in the middle of a log
// names the file and offset, and no zkafka data appears.
func TestImportDamagedLeavesNothing(t *testing.T) {
	src := copyFixture(t, "snapshot.7b", "log.6a", "log.7d")
	p := filepath.Join(src, "log.6a")
	b, _ := os.ReadFile(p)
	b[100] ^= 0x40
	os.WriteFile(p, b, 0o644)
	cfg, data := zooCfg(t)
	_, err := run(t, "zk-import", "--from", src, cfg)
	if err == nil || !strings.Contains(err.Error(), "log.6a at offset ") || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(data, "version-2")); !os.IsNotExist(err) {
		t.Errorf("the failed import left %s: %v", filepath.Join(data, "version-2"), err)
	}
}
