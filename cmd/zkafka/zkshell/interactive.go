package zkshell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/chzyer/readline"
	"github.com/go-zookeeper/zk"
)

// isTerminal reports whether f is a terminal (the interactive shell).
func isTerminal(f *os.File) bool { return readline.IsTerminal(int(f.Fd())) }

// Interactive reads commands from the terminal in with zkCli's prompt,
// a history (the arrow keys, Ctrl-R) and completion (Tab) of command
// names and paths, until quit or end of input.
func (s *Shell) Interactive(in *os.File) error {
	s.reading = true
	rl, err := readline.NewEx(&readline.Config{
		Prompt:          s.prompt(),
		AutoComplete:    completer{s},
		Stdin:           in,
		Stdout:          s.out,
		Stderr:          s.errOut,
		InterruptPrompt: "^C",
		EOFPrompt:       "quit",
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	s.outMu.Lock()
	s.out, s.errOut = rl.Stdout(), rl.Stderr() // events redraw the prompt after them
	s.outMu.Unlock()
	for {
		rl.SetPrompt(s.prompt())
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			continue
		}
		if err != nil { // io.EOF: Ctrl-D
			return nil
		}
		if errors.Is(s.Run(line), errQuit) {
			return nil
		}
	}
}

// Script runs the commands of r, one a line, until quit or its end, as
// zkCli does when its input is not a terminal: no prompt.
func (s *Shell) Script(r io.Reader) error {
	s.reading = true
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if errors.Is(s.Run(sc.Text()), errQuit) {
			return nil
		}
	}
	return sc.Err()
}

// prompt is zkCli's: [zk: 127.0.0.1:2181(CONNECTED) 3]
func (s *Shell) prompt() string {
	state := "CLOSED"
	if s.conn != nil {
		state = stateName(s.conn.State())
	}
	return fmt.Sprintf("[zk: %s(%s) %d] ", s.server, state, len(s.history))
}

// stateName is the Java client's ZooKeeper.States name of a state.
func stateName(st zk.State) string {
	switch st {
	case zk.StateHasSession, zk.StateConnected:
		return "CONNECTED"
	case zk.StateConnectedReadOnly:
		return "CONNECTEDREADONLY"
	case zk.StateAuthFailed:
		return "AUTH_FAILED"
	case zk.StateExpired, zk.StateDisconnected:
		return "CLOSED"
	default:
		return "CONNECTING"
	}
}

// commandNames are the shell's commands in order.
func commandNames() []string {
	names := make([]string, 0, len(commandsByName))
	for n := range commandsByName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// completer completes the first word from the command names and any word
// that starts with / from the children of the path it names so far.
type completer struct{ s *Shell }

func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	text := string(line[:pos])
	start := strings.LastIndexAny(text, " \t") + 1
	word := text[start:]
	var candidates []string
	switch {
	case strings.TrimSpace(text[:start]) == "":
		candidates = commandNames()
	case strings.HasPrefix(word, "/"):
		candidates = c.children(word)
	default:
		return nil, 0
	}
	prefix := word
	if strings.HasPrefix(word, "/") {
		prefix = word[strings.LastIndexByte(word, '/')+1:]
	}
	var out [][]rune
	for _, cand := range candidates {
		if strings.HasPrefix(cand, prefix) {
			out = append(out, []rune(cand[len(prefix):]))
		}
	}
	return out, len([]rune(prefix))
}

// children lists the children of the parent of the path being typed.
func (c completer) children(word string) []string {
	if c.s.conn == nil {
		return nil
	}
	parent := word[:strings.LastIndexByte(word, '/')]
	if parent == "" {
		parent = "/"
	}
	children, _, err := c.s.conn.Children(c.s.abs(parent))
	if err != nil {
		return nil
	}
	sort.Strings(children)
	return children
}
