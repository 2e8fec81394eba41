package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// version is set at link time with -ldflags "-X main.version=...".
var version = "dev"

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	goVersion := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
	}
	fmt.Fprintf(stdout, "zkafka %s (%s)\n", version, goVersion)
	return 0
}
