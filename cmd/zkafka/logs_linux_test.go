package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// raftChatter are pieces of etcd raft's own log lines: elections, votes,
// configuration. An operator does not need them at the default level.
var raftChatter = []string{"became pre-candidate", "became candidate", "became leader", "vote", "newRaft", "switched to configuration", "MsgPreVote"}

// runUntilUp starts `zkafka run` with extra flags on free ports, waits
// until its broker is registered, stops it with SIGTERM and returns its
// stderr.
func runUntilUp(t *testing.T, extra ...string) string {
	t.Helper()
	args := append([]string{"run", "-data", filepath.Join(t.TempDir(), "data"),
		"-zookeeper-addr", "127.0.0.1:0", "-kafka-addr", "127.0.0.1:0"}, extra...)
	p := startChild(t, 1<<40, args...)
	checkFor(t, 60*time.Second, "the broker to register", func() bool {
		return strings.Contains(p.stderr(), "broker registered") || p.exited()
	})
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr())
	}
	return p.stderr()
}

// TestRunLogsNoRaftChatterByDefault: at the default level `zkafka run`
// says where each server listens and who leads, and keeps raft's
// internals for --log-level debug.
func TestRunLogsNoRaftChatterByDefault(t *testing.T) {
	out := runUntilUp(t)
	for _, line := range strings.Split(out, "\n") {
		for _, c := range raftChatter {
			if strings.Contains(line, c) {
				t.Errorf("raft's internals at the default level: %s", line)
			}
		}
	}
	for _, want := range []string{"zookeeper server started", "addr=127.0.0.1:", "leader changed", "kafka broker started", "this broker is the controller"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	debug := runUntilUp(t, "--log-level", "debug")
	if !strings.Contains(debug, "became leader") {
		t.Errorf("--log-level debug lacks raft's own lines:\n%s", debug)
	}
}

// TestRunLogFormatJSON: --log-format json makes every line a JSON object.
func TestRunLogFormatJSON(t *testing.T) {
	out := runUntilUp(t, "-log-format", "json")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec["msg"] == nil {
			t.Errorf("not a JSON record: %s", line)
		}
	}
}
