package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestHelpListsEveryCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := runMain([]string{"help"}, &out, &errOut); code != 0 {
		t.Fatalf("help exit code %d", code)
	}
	for _, c := range subcommands() {
		if !strings.Contains(out.String(), "\n  "+c.Name()+" ") {
			t.Errorf("help does not list %q:\n%s", c.Name(), out.String())
		}
	}
}

func TestEachCommandHasHelp(t *testing.T) {
	for _, c := range subcommands() {
		for _, args := range [][]string{{"help", c.Name()}, {c.Name(), "-h"}, {c.Name(), "--help"}} {
			var out, errOut bytes.Buffer
			if code := runMain(args, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "usage: zkafka "+c.Name()) {
				t.Errorf("%v: code %d, output %q", args, code, out.String())
			}
		}
	}
}

func TestBareCommandPrintsHelpAndExits2(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := runMain(nil, &out, &errOut); code != 2 || !strings.Contains(out.String(), "commands:") {
		t.Fatalf("code %d stdout %q", code, out.String())
	}
}

func TestUnknownCommandFails(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := runMain([]string{"nope"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "unknown command") ||
		strings.Count(errOut.String(), "\n") != 1 {
		t.Fatalf("code %d stderr %q", code, errOut.String())
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errOut bytes.Buffer
		if code := runMain(args, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "zkafka "+version) {
			t.Errorf("%v: code %d stdout %q", args, code, out.String())
		}
	}
}

// TestCompletionScripts: `zkafka completion SHELL` prints a script that
// completes zkafka's commands in that shell.
func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__start_zkafka", "zsh": "#compdef zkafka", "fish": "complete -c zkafka"} {
		var out, errOut bytes.Buffer
		if code := runMain([]string{"completion", shell}, &out, &errOut); code != 0 || !strings.Contains(out.String(), want) {
			t.Errorf("completion %s: code %d, lacks %q; stderr %q", shell, code, want, errOut.String())
		}
	}
	// The hidden __complete command answers what the scripts ask.
	var out, errOut bytes.Buffer
	runMain([]string{"__complete", "zoo"}, &out, &errOut)
	if !strings.Contains(out.String(), "zookeeper") {
		t.Errorf("__complete zoo = %q", out.String())
	}
	out.Reset()
	runMain([]string{"__complete", "zk", "getA"}, &out, &errOut)
	if got := strings.Fields(out.String()); len(got) < 2 || got[0] != "getAcl" || got[1] != "getAllChildrenNumber" {
		t.Errorf("__complete zk getA = %q", out.String())
	}
}

// TestLongFlagsWithOneDash: the Go flag package's spellings (-data) keep
// their meaning under pflag, and a command's own arguments are left alone.
func TestLongFlagsWithOneDash(t *testing.T) {
	root := rootCommand()
	for _, tc := range []struct{ in, want string }{
		{"run -data d -zookeeper-addr a -kafka-addr=k", "run --data d --zookeeper-addr a --kafka-addr=k"},
		{"run --data d -log-level debug", "run --data d --log-level debug"},
		{"zookeeper -log-format json zoo.cfg -log-level x", "zookeeper --log-format json zoo.cfg -log-level x"},
		{"run -h", "run -h"},
		{"zk -server h:1 ls -R -s /", "zk --server h:1 ls -R -s /"},
		{"zk --zookeeper h:1 create -e /a -data", "zk --zookeeper h:1 create -e /a -data"},
	} {
		got := strings.Join(longFlagsWithOneDash(root, strings.Fields(tc.in)), " ")
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}
