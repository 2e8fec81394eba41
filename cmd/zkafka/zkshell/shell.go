package zkshell

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// Shell runs zkCli's commands on one session. Results go to out, errors to
// errOut, as zkCli prints them; watch events are printed to out as they
// arrive.
type Shell struct {
	// The session; nil after close. Changed only by connect and close,
	// which run as commands, with outMu held.
	conn    *zk.Conn
	side    *sidecar
	server  string
	chroot  string // the --zookeeper address's /chroot, "" for none
	json    bool
	timeout time.Duration

	outMu  sync.Mutex // one command's or one event's output at a time
	out    io.Writer
	errOut io.Writer

	history       []string     // every line run, numbered from 0 as zkCli numbers them
	hideWatches   bool         // printwatches off
	reading       bool         // reading commands (Interactive, Script), not running one
	sessionEvents bool         // print the connection's state changes (a shell reading commands)
	gen           atomic.Int64 // the current connection's; events of others are dropped

	eventMu    sync.Mutex
	events     []zk.Event    // received, not yet printed
	eventReady chan struct{} // a new event is queued

	watchMu         sync.Mutex
	watches         map[watchKey]bool // the one-shot and persistent watches set and not yet fired
	persistentModes map[string]int32  // addWatch's mode by path, to set them again on a new connection
}

// errQuit ends the interactive loop.
var errQuit = errors.New("quit")

// errNotConnected is a command after close.
var errNotConnected = errors.New("not connected")

// errUsage is a command line a command cannot run; its usage was printed.
var errUsage = errors.New("usage")

// lineWords splits a command line as zkCli does: words, or quoted strings
// (the quotes taken off).
var lineWords = regexp.MustCompile(`\s*([^"']\S*|"[^"]*"|'[^']*')\s*`)

func splitLine(line string) []string {
	var words []string
	for _, m := range lineWords.FindAllStringSubmatch(line, -1) {
		w := m[1]
		if len(w) >= 2 && (w[0] == '"' || w[0] == '\'') && w[len(w)-1] == w[0] {
			w = w[1 : len(w)-1]
		}
		words = append(words, w)
	}
	return words
}

// Run runs one command line, records it in the history, and returns the
// command's error (already printed), errQuit after quit.
func (s *Shell) Run(line string) error {
	words := splitLine(line)
	if len(words) == 0 {
		return nil
	}
	s.history = append(s.history, line)
	return s.runWords(words)
}

// runWords runs a parsed line: it checks the options and the argument
// count, runs the command with its output held back, then prints the
// events that came before the reply, then the output.
func (s *Shell) runWords(words []string) error {
	name := words[0]
	c, ok := commandsByName[name]
	if !ok {
		s.outMu.Lock()
		if s.reading { // a shell reading commands, not one command: the list helps
			printUsage(s.errOut)
		}
		fmt.Fprintf(s.errOut, "Command not found: Command not found %s\n", name)
		s.outMu.Unlock()
		return errUsage
	}
	opts, args, err := parseOptions(c.options, words[1:])
	if group, ok := exclusiveOptions[name]; ok && err == nil {
		err = checkExclusive(group, words[1:])
	}
	if err == nil && (len(args) < c.minArgs || (c.maxArgs >= 0 && len(args) > c.maxArgs)) {
		err = errUsage
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if err != nil {
		if errors.Is(err, errUsage) {
			fmt.Fprintln(s.errOut, c.name+" "+c.usage)
		} else {
			fmt.Fprintln(s.errOut, err)
		}
		return errUsage
	}
	if s.conn == nil && !offline[c.name] {
		fmt.Fprintln(s.errOut, "Not connected")
		return errNotConnected
	}
	out, errOut := s.out, s.errOut
	var buf bytes.Buffer // the command's output, printed after its events
	s.out, s.errOut = &buf, &buf
	err = c.run(s, opts, args)
	s.out, s.errOut = out, errOut
	s.flushEventsLocked()
	if err != nil && !errors.Is(err, errQuit) && !errors.Is(err, errUsage) {
		fmt.Fprintln(&buf, err)
	}
	if errors.Is(err, errUsage) {
		fmt.Fprintln(&buf, c.name+" "+c.usage)
	}
	s.writeOutput(buf.Bytes(), err != nil)
	return err
}

// writeOutput writes a command's output: to errOut if the command failed
// (zkCli prints its errors there), else to out.
func (s *Shell) writeOutput(b []byte, failed bool) {
	w := s.out
	if failed {
		w = s.errOut
	}
	w.Write(b)
}

// parseOptions reads zkCli's options (commons-cli): single-letter flags,
// anywhere on the line; spec lists them, a letter followed by ':' takes a
// value.
func parseOptions(spec string, words []string) (map[byte]string, []string, error) {
	opts := map[byte]string{}
	var args []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if len(w) < 2 || w[0] != '-' || (w[1] >= '0' && w[1] <= '9') {
			args = append(args, w)
			continue
		}
		k := strings.IndexByte(spec, w[1])
		if len(w) != 2 || k < 0 || w[1] == ':' {
			return nil, nil, fmt.Errorf("org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: %s", w)
		}
		if k+1 < len(spec) && spec[k+1] == ':' {
			if i+1 >= len(words) {
				return nil, nil, fmt.Errorf("org.apache.commons.cli.MissingArgumentException: Missing argument for option: %c", w[1])
			}
			i++
			opts[w[1]] = words[i]
			continue
		}
		opts[w[1]] = ""
	}
	return opts, args, nil
}

// exclusiveOptions are the commands whose options form one group of
// which at most one may be given (a commons-cli OptionGroup).
var exclusiveOptions = map[string]string{}

// checkExclusive refuses a second option of group, with commons-cli's
// message naming the second and the first.
func checkExclusive(group string, words []string) error {
	var first byte
	for _, w := range words {
		if len(w) != 2 || w[0] != '-' || strings.IndexByte(group, w[1]) < 0 {
			continue
		}
		if first != 0 {
			return fmt.Errorf("org.apache.commons.cli.AlreadySelectedException: The option '%c' was specified but an option from this group has already been selected: '%c'", w[1], first)
		}
		first = w[1]
	}
	return nil
}

// printUsage is zkCli's list of commands.
func printUsage(w io.Writer) {
	fmt.Fprintln(w, "ZooKeeper -server host:port cmd args")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "\t%s %s\n", n, commandsByName[n].usage)
	}
}

// print writes to out under outMu (held by runWords for commands).
func (s *Shell) printf(format string, a ...any) { fmt.Fprintf(s.out, format, a...) }
