package main

import (
	"bytes"
	"testing"

	"github.com/zkafka/zkafka/internal/zktest"
)

// TestZkShellThroughRoot: `zkafka zk` is on the command line with zkCli's
// spelling of its flag (-server) and its exit statuses.
func TestZkShellThroughRoot(t *testing.T) {
	addr := zktest.Start(t).Addr().String()
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"zk", "-server", addr, "create", "/x", "y"}, 0, "Created /x\n", ""},
		{[]string{"zk", "-zookeeper", addr, "get", "-s", "/nope"}, 1, "", "Node does not exist: /nope\n"},
		{[]string{"zk", "--zookeeper=" + addr, "bogus"}, 2, "", "Command not found: Command not found bogus\n"},
		{[]string{"zk", "-output", "json", "-server", addr, "stat", "/nope"}, 1, "", "Node does not exist: /nope\n"},
	} {
		var out, errOut bytes.Buffer
		code := runMain(tc.args, &out, &errOut)
		if code != tc.code || out.String() != tc.stdout || (tc.stderr != "" && errOut.String() != tc.stderr) {
			t.Errorf("zkafka %q: exit %d, stdout %q, stderr %q", tc.args, code, out.String(), errOut.String())
		}
	}
}
