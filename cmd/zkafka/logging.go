package main

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// logFlags are the logging flags every server command takes.
type logFlags struct {
	level  choice
	format choice
}

func (l *logFlags) register(fs *pflag.FlagSet) {
	l.level = choice{value: "info", allowed: []string{"debug", "info", "warn", "error"}, kind: "level"}
	l.format = choice{value: "text", allowed: []string{"text", "json"}, kind: "format"}
	fs.Var(&l.level, "log-level", "log level: debug, info, warn, error")
	fs.Var(&l.format, "log-format", "log format: text or json")
}

// logger builds the structured logger the servers log through.
func (l *logFlags) logger(w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(l.level.value))); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if l.format.value == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// choice is a flag whose value is one of a few words (any case); any other
// value is a usage error rather than a silent default.
type choice struct {
	value   string
	allowed []string
	kind    string // the value's name in the help: level, format
}

func (c *choice) String() string { return c.value }

// Type names the value in the help (pflag.Value).
func (c *choice) Type() string { return c.kind }

func (c *choice) Set(v string) error {
	v = strings.ToLower(v)
	if !slices.Contains(c.allowed, v) {
		return fmt.Errorf("must be one of %s", strings.Join(c.allowed, ", "))
	}
	c.value = v
	return nil
}
