package zkshell

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"
)

// options are the flags of `zkafka zk`.
type options struct {
	server  string
	output  string
	timeout time.Duration
}

// Command is `zkafka zk [cmd args...]`: one zkCli command from the
// arguments, or a shell reading commands (interactive on a terminal, a
// script otherwise).
func Command() *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "zk [flags] [cmd args...]",
		Short: "a ZooKeeper shell with zkCli's commands (ls, get, set, create, ...)",
		Long: `A ZooKeeper shell with zkCli.sh's commands, their spellings and their output:
` + commandList() + `
With a command it runs that command and exits (status 1 if it failed); without,
it reads commands: on a terminal with a prompt, history and completion of paths
(Tab), else a script from stdin. -o json prints ls, get and stat as JSON.`,
		Example: "  zkafka zk --zookeeper 127.0.0.1:2181 ls -R /\n  zkafka zk -server 127.0.0.1:2181/chroot",
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, o, args)
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveDefault
			}
			var names []string
			for _, n := range commandNames() {
				if strings.HasPrefix(n, toComplete) {
					names = append(names, n)
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
	}
	cmd.Flags().SetInterspersed(false) // the shell command's own options follow it
	cmd.Flags().StringVar(&o.server, "zookeeper", "127.0.0.1:2181", "ZooKeeper to connect to: HOST:PORT[,HOST:PORT...][/chroot]")
	cmd.Flags().StringVar(&o.server, "server", "127.0.0.1:2181", "the same as --zookeeper (zkCli's spelling)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format of ls, get and stat: text or json")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 30*time.Second, "session timeout, and how long to wait for a connection")
	return cmd
}

// commandList is the help's list of the shell's commands.
func commandList() string {
	var b strings.Builder
	for _, n := range commandNames() {
		fmt.Fprintf(&b, "  %s %s\n", n, commandsByName[n].usage)
	}
	return b.String()
}

// failed is the exit status of a shell that has printed why it failed.
type failed int

func (f failed) Error() string { return fmt.Sprintf("exit status %d", int(f)) }
func (f failed) ExitCode() int { return int(f) }

func run(cmd *cobra.Command, o options, args []string) error {
	if o.output != "text" && o.output != "json" {
		return fmt.Errorf("-o %s: the output format is text or json", o.output)
	}
	interactive := len(args) == 0
	tty, onTerminal := cmd.InOrStdin().(*os.File)
	onTerminal = onTerminal && interactive && isTerminal(tty)
	if onTerminal {
		fmt.Fprintf(cmd.OutOrStdout(), "Connecting to %s\nWelcome to ZooKeeper!\n", o.server)
	}
	s, err := Dial(o.server, o.timeout, cmd.OutOrStdout(), cmd.ErrOrStderr(), interactive)
	if err != nil {
		return err
	}
	defer s.Close()
	s.json = o.output == "json"
	if !interactive {
		err := s.Run(strings.Join(quoteWords(args), " "))
		switch {
		case err == nil, errors.Is(err, errQuit):
			return nil
		case errors.Is(err, errUsage):
			return failed(2)
		default:
			return failed(1)
		}
	}
	if onTerminal {
		return s.Interactive(tty)
	}
	return s.Script(cmd.InOrStdin())
}

// quoteWords quotes the arguments that hold spaces, so that the line they
// make splits back into them (zkafka zk set /a "two words").
func quoteWords(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t") {
			if strings.Contains(a, `"`) {
				a = "'" + a + "'"
			} else {
				a = `"` + a + `"`
			}
		}
		out[i] = a
	}
	return out
}

// Dial connects a shell to server (HOST:PORT[,...][/chroot]) and waits,
// at most timeout, for the session. Results go to out, errors to errOut;
// with sessionEvents the connection's state changes are printed as watch
// events, as zkCli prints them.
func Dial(server string, timeout time.Duration, out, errOut io.Writer, sessionEvents bool) (*Shell, error) {
	s := &Shell{timeout: timeout, out: out, errOut: errOut, sessionEvents: sessionEvents,
		watches: map[watchKey]bool{}, persistentModes: map[string]int32{}, eventReady: make(chan struct{}, 1)}
	if err := s.connect(server); err != nil {
		return nil, err
	}
	go s.printEvents()
	return s, nil
}

// connection is one session of the shell; a new one (connect) ignores the
// events of the ones before.
type connection struct {
	gen      int64 // Shell.gen when it was made
	side     *sidecar
	chroot   string
	sessions atomic.Int32 // StateHasSession events seen: more than one is a reconnect
}

// connect opens a session on server in place of the current one, if any,
// and waits, at most s.timeout, for it.
func (s *Shell) connect(server string) error {
	hosts, chroot, err := parseServer(server)
	if err != nil {
		return err
	}
	s.disconnect()
	c := &connection{gen: s.gen.Add(1), side: &sidecar{}, chroot: chroot}
	connected := make(chan struct{})
	var once sync.Once
	conn, events, err := zk.Connect(hosts, s.timeout, zk.WithDialer(c.side.dialer), zk.WithLogger(quietLogger{}),
		zk.WithLogInfo(false), zk.WithEventCallback(func(ev zk.Event) {
			if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
				once.Do(func() { close(connected) })
			}
			s.queueEvent(c, ev)
		}))
	if err != nil {
		return fmt.Errorf("cannot connect to %s: %v", server, err)
	}
	go func() {
		for range events { // the callback has them; the channel must not fill
		}
	}()
	select {
	case <-connected:
	case <-time.After(s.timeout):
		s.gen.Add(1)
		conn.Close()
		return fmt.Errorf("cannot connect to %s within %s", server, s.timeout)
	}
	s.conn, s.side, s.server, s.chroot = conn, c.side, server, chroot
	s.watchMu.Lock()
	clear(s.watches)
	clear(s.persistentModes)
	s.watchMu.Unlock()
	return nil
}

// disconnect closes the session, if any, and ignores its events from now
// on; a shell that prints session events prints the Closed event zkCli
// prints.
func (s *Shell) disconnect() bool {
	if s.conn == nil {
		return false
	}
	s.gen.Add(1)
	s.conn.Close()
	s.conn = nil
	if s.sessionEvents { // queued, so that it comes before the next session's events
		s.eventMu.Lock()
		s.events = append(s.events, zk.Event{Type: zk.EventSession, State: 7}) // Closed
		s.eventMu.Unlock()
	}
	return true
}

// Close ends the session.
func (s *Shell) Close() {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.disconnect()
	s.flushEventsLocked()
}

// parseServer splits HOST:PORT[,HOST:PORT...][/chroot].
func parseServer(server string) (hosts []string, chroot string, err error) {
	if i := strings.IndexByte(server, '/'); i >= 0 {
		server, chroot = server[:i], server[i:]
		if chroot == "/" {
			chroot = ""
		} else if err := checkPath(chroot); err != nil {
			return nil, "", fmt.Errorf("chroot %s: %v", chroot, err)
		}
	}
	for _, h := range strings.Split(server, ",") {
		if h == "" {
			return nil, "", fmt.Errorf("--zookeeper %q: want HOST:PORT[,HOST:PORT...][/chroot]", server)
		}
		if !strings.Contains(h, ":") {
			h += ":2181"
		}
		hosts = append(hosts, h)
	}
	return hosts, chroot, nil
}

// abs is the server's path for the shell's path p.
func (s *Shell) abs(p string) string { return chrooted(s.chroot, p) }

// chrooted is the server's path for p under chroot.
func chrooted(chroot, p string) string {
	if chroot == "" {
		return p
	}
	if p == "/" {
		return chroot
	}
	return chroot + p
}

// rel is the shell's path for the server's path p.
func (s *Shell) rel(p string) string {
	if s.chroot == "" || !strings.HasPrefix(p, s.chroot) {
		return p
	}
	if p == s.chroot {
		return "/"
	}
	return strings.TrimPrefix(p, s.chroot)
}

// quietLogger drops the client's own log lines: the shell reports what
// matters itself.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
