package kafkaenv

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// Logs keeps a broker's log records at WARN and above (and the "broker
// registered" line), so tests can assert what the broker said.
type Logs struct {
	// verbose (the VerboseLogs option) captures INFO records too, each
	// with its attributes: "LEVEL message k=v k=v".
	verbose bool
	mu      sync.Mutex
	recs    []string // "LEVEL message"
}

// Count returns how many captured records start with prefix ("WARN ...").
func (c *Logs) Count(prefix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, r := range c.recs {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// All returns the captured records, oldest first.
func (c *Logs) All() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.recs...)
}

// baseHandler discards, or with ZKAFKA_TEST_LOG set writes everything down
// to DEBUG to stderr.
func baseHandler() slog.Handler {
	if os.Getenv("ZKAFKA_TEST_LOG") != "" {
		return slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	return slog.NewTextHandler(io.Discard, nil)
}

// logHandler passes records on to next, counting the ERROR records about a
// panic in panics and, if logs is set, capturing records into it.
type logHandler struct {
	logs   *Logs // nil: capture nothing
	panics *atomic.Int64
	next   slog.Handler
	attrs  []slog.Attr // those of WithAttrs, for verbose Logs
}

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	min := slog.LevelError
	if h.logs != nil {
		min = slog.LevelInfo // for "broker registered"
	}
	return l >= min || h.next.Enabled(ctx, l)
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && strings.Contains(r.Message, "panic") {
		h.panics.Add(1)
	}
	if h.logs != nil && (r.Level >= slog.LevelWarn || r.Message == "broker registered" || h.logs.verbose && r.Level >= slog.LevelInfo) {
		text := r.Level.String() + " " + r.Message
		if h.logs.verbose {
			for _, a := range h.attrs {
				text += " " + a.String()
			}
			r.Attrs(func(a slog.Attr) bool { text += " " + a.String(); return true })
		}
		h.logs.mu.Lock()
		h.logs.recs = append(h.logs.recs, text)
		h.logs.mu.Unlock()
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &logHandler{logs: h.logs, panics: h.panics, next: h.next.WithAttrs(as), attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], as...)}
}

func (h *logHandler) WithGroup(g string) slog.Handler {
	return &logHandler{logs: h.logs, panics: h.panics, next: h.next.WithGroup(g), attrs: h.attrs}
}
