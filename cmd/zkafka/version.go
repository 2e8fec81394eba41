package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time with -ldflags "-X main.version=...".
var version = "dev"

// versionCommand is `zkafka version`.
func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitWith(printVersion(cmd.OutOrStdout()))
		},
	}
}

func printVersion(stdout io.Writer) int {
	goVersion := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
	}
	fmt.Fprintf(stdout, "zkafka %s (%s)\n", version, goVersion)
	return 0
}
