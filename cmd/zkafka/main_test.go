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
	for _, c := range commands() {
		if !strings.Contains(out.String(), c.name) {
			t.Errorf("help does not list %q:\n%s", c.name, out.String())
		}
	}
}

func TestEachCommandHasHelp(t *testing.T) {
	for _, c := range commands() {
		var out, errOut bytes.Buffer
		if code := runMain([]string{"help", c.name}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "usage: zkafka "+c.name) {
			t.Errorf("help %s: code %d, output %q", c.name, code, out.String())
		}
	}
}

func TestUnknownCommandFails(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := runMain([]string{"nope"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "unknown command") {
		t.Fatalf("code %d stderr %q", code, errOut.String())
	}
}
