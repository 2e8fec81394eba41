package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/zkafka/zkafka/cmd/zkafka/kafkatool"
	"github.com/zkafka/zkafka/cmd/zkafka/zkdata"
	"github.com/zkafka/zkafka/cmd/zkafka/zkshell"
)

// subcommands is the one list of the binary's commands; a new tool adds
// its commands here with one line (cmds = append(cmds, tool.Commands()...)).
// A command that fails prints why and returns an error with an
// ExitCode() int method, or returns a plain error, which runMain prints
// as one line with exit status 1.
func subcommands() []*cobra.Command {
	cmds := []*cobra.Command{
		runCommand(),
		zookeeperCommand(),
		brokerCommand(),
		versionCommand(),
		zkshell.Command(),
	}
	cmds = append(cmds, kafkatool.Commands()...)
	cmds = append(cmds, zkdata.Commands()...)
	return cmds
}

// rootCommand is the zkafka command with every subcommand added. Errors
// and usage are printed by runMain, not by cobra, so that each failure is
// one line.
func rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "zkafka <command>",
		Short:         "a drop-in ZooKeeper server and Kafka broker in one binary",
		Long:          "zkafka: a drop-in ZooKeeper server and Kafka broker in one binary",
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown command %q", args[0])}
			}
			return nil
		},
		// Bare `zkafka` is a usage error: the help, and exit status 2.
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(cmd.OutOrStdout())
			if err := cmd.Help(); err != nil {
				return err
			}
			return exitCode(2)
		},
	}
	root.SetVersionTemplate("zkafka {{.Version}}\n")
	root.SetHelpTemplate(helpTemplate)
	root.SetUsageTemplate(helpTemplate)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(subcommands()...)
	return root
}

// helpTemplate is the help of every command: the usage line, the long
// description, the subcommands and the flags.
const helpTemplate = `usage: {{.UseLine}}{{with .Long}}

{{.}}{{end}}{{if .HasAvailableSubCommands}}

commands:{{range .Commands}}{{if .IsAvailableCommand}}
  {{rpad .Name .NamePadding}} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

global flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Run 'zkafka help <command>' or 'zkafka <command> -h' for details.{{end}}
`

// runMain runs the command line args and returns the exit status: 0, 1
// when a command failed (it has said why), 2 for a usage or configuration
// error, which is one line on stderr.
func runMain(args []string, stdout, stderr io.Writer) int {
	root := rootCommand()
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(longFlagsWithOneDash(root, args))
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	if cmd == nil {
		cmd = root
	}
	var usage usageError
	if errors.As(err, &usage) || isCobraUsageError(err) {
		fmt.Fprintf(stderr, "zkafka: %s; usage: %s (see %s --help)\n", oneLine(err), cmd.UseLine(), cmd.CommandPath())
		return 2
	}
	fmt.Fprintf(stderr, "zkafka: %s\n", oneLine(err))
	return 1
}

// isCobraUsageError reports the errors cobra makes itself for a command
// line it cannot run (flags are caught by the flag error func).
func isCobraUsageError(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command") || strings.Contains(msg, "arg(s), received") ||
		strings.HasPrefix(msg, "invalid argument")
}

// oneLine keeps a message on one line.
func oneLine(err error) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(err.Error())
}

// usageError is a command line that cannot be run: exit status 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// exitCode is a command's exit status; whatever it had to say about the
// failure it has already printed. Any error with an ExitCode method (as
// the tools in other packages return) is treated the same way.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }
func (c exitCode) ExitCode() int { return int(c) }

// exitWith turns a command's exit status into the error cobra returns.
func exitWith(code int) error {
	if code == 0 {
		return nil
	}
	return exitCode(code)
}

// longFlagsWithOneDash rewrites -name to --name for every long flag of
// the command args name, so that the Go flag package's spellings
// (-data, -zookeeper-addr, zkCli's -server) keep working under pflag, which
// would read -data as the shorthands -d -a -t -a. It stops at the first
// argument that is not a flag, as the Go flag package did, so that the
// arguments of a command run by the shell (zkafka zk ls -R /) are untouched.
func longFlagsWithOneDash(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		return args
	}
	cmd.InitDefaultHelpFlag()
	out := append([]string(nil), args...)
	seenCommand := cmd == root
	for i := 0; i < len(out); i++ {
		a := out[i]
		if !seenCommand {
			// Skip the command names themselves (zkafka zk ...).
			if a == cmd.Name() {
				seenCommand = true
			}
			continue
		}
		if a == "--" || !strings.HasPrefix(a, "-") {
			break
		}
		if strings.HasPrefix(a, "--") || len(a) < 3 {
			if f := lookupFlag(cmd, strings.TrimLeft(a, "-")); f != nil && f.NoOptDefVal == "" && !strings.Contains(a, "=") {
				i++ // its value
			}
			continue
		}
		name, _, hasValue := strings.Cut(a[1:], "=")
		f := lookupFlag(cmd, name)
		if f == nil {
			continue
		}
		out[i] = "-" + a
		if !hasValue && f.NoOptDefVal == "" {
			i++
		}
	}
	return out
}

// lookupFlag finds the flag -name or --name of cmd, its own or inherited.
func lookupFlag(cmd *cobra.Command, name string) *pflag.Flag {
	if len(name) == 1 {
		return cmd.Flags().ShorthandLookup(name)
	}
	if f := cmd.Flags().Lookup(name); f != nil {
		return f
	}
	return cmd.InheritedFlags().Lookup(name)
}
