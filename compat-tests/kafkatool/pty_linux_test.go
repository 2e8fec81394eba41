package kafkatool

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the tool writes to slave, the
// test reads what a person would see from master.
func openPTY(t *testing.T) (master, slave *os.File) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// TestProgressOnlyOnATerminal: produce draws its records/s and MB/s bar
// on a terminal's stderr, and nothing on a pipe (the other tests).
func TestProgressOnlyOnATerminal(t *testing.T) {
	e := startEnv(t)
	run(t, "", "topics", "create", "bar", "--partitions", "1", "--bootstrap-server", e.Addr)
	master, slave := openPTY(t)
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			mu.Lock()
			screen.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	in := strings.Repeat("a record\n", 2000)
	var out, pipeErr bytes.Buffer
	if err := runWith(kafkaenv.Context(t, 30*time.Second), strings.NewReader(in), &out, slave,
		"produce", "bar", "--bootstrap-server", e.Addr); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 10*time.Second, "the terminal shows records/s and MB/s", func() bool {
		mu.Lock()
		defer mu.Unlock()
		s := screen.String()
		return strings.Contains(s, "records/s") && strings.Contains(s, "MB/s") && strings.Contains(s, "produced 2000 records")
	})
	if err := runWith(kafkaenv.Context(t, 30*time.Second), strings.NewReader(in), io.Discard, &pipeErr,
		"produce", "bar", "--bootstrap-server", e.Addr); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(pipeErr.String(), "records/s") {
		t.Errorf("a progress bar on a pipe: %q", pipeErr.String())
	}
}
