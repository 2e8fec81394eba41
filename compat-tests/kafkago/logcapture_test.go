package kafkago

import (
	"context"
	"log/slog"
	"strings"
	"sync"
)

// logCapture keeps the broker's log records at WARN and above (and the
// "broker registered" line), so tests can assert what the broker said.
type logCapture struct {
	mu   sync.Mutex
	recs []string // "LEVEL message"
}

func (c *logCapture) wrap(next slog.Handler) slog.Handler { return &captureHandler{c: c, next: next} }

// count returns how many captured records start with prefix ("WARN ...").
func (c *logCapture) count(prefix string) int {
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

func (c *logCapture) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.recs...)
}

type captureHandler struct {
	c    *logCapture
	next slog.Handler
}

func (h *captureHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

func (h *captureHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn || r.Message == "broker registered" {
		h.c.mu.Lock()
		h.c.recs = append(h.c.recs, r.Level.String()+" "+r.Message)
		h.c.mu.Unlock()
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *captureHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &captureHandler{c: h.c, next: h.next.WithAttrs(as)}
}

func (h *captureHandler) WithGroup(g string) slog.Handler {
	return &captureHandler{c: h.c, next: h.next.WithGroup(g)}
}
