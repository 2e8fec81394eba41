package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

// The process tests run this test binary as the zkafka command: with
// asCommandEnv set, TestMain runs runMain on the process's arguments
// instead of the tests. With fsizeEnv set too, it first sets the file-size
// limit (RLIMIT_FSIZE, bytes) it names: a real storage fault, as a write
// past it fails in the kernel with EFBIG ("file too large") the way a full
// disk fails one with ENOSPC, and it needs no privilege (a tmpfs would need
// root). With lowFDEnv set, it lowers its descriptor limit once the
// addresses it names accept (emfile_test.go).
const (
	asCommandEnv = "ZKAFKA_TEST_AS_COMMAND"
	fsizeEnv     = "ZKAFKA_TEST_CHILD_FSIZE"
	lowFDEnv     = "ZKAFKA_TEST_CHILD_LOW_FDS"
)

func TestMain(m *testing.M) {
	if os.Getenv(asCommandEnv) != "" {
		os.Exit(commandMain())
	}
	os.Exit(m.Run())
}

// commandMain runs the command named by the process's arguments, under the
// file-size limit fsizeEnv names, if any, and with lowFDEnv's descriptor
// limit.
func commandMain() int {
	if limit := os.Getenv(fsizeEnv); limit != "" {
		n, err := strconv.ParseUint(limit, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad", fsizeEnv, err)
			return 3
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			fmt.Fprintln(os.Stderr, "setrlimit:", err)
			return 3
		}
	}
	if addrs := os.Getenv(lowFDEnv); addrs != "" {
		go lowerFDLimitOnceUp(addrs)
	}
	return runMain(os.Args[1:], os.Stdout, os.Stderr)
}

// commandProcess is `zkafka args...` as a child process of the test (this
// test binary run as the command); extraEnv is added to its environment.
func commandProcess(args []string, extraEnv ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), asCommandEnv+"=1"), extraEnv...)
	return cmd
}
