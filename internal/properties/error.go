package properties

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Error is a bad configuration: a value that is not allowed, or a file that
// does not parse. Its text is one line that names the file, the line, the
// key and its value, and what is allowed:
//
//	conf/zoo.cfg:3: tickTime=0: must be an integer from 1 to 107374182 (milliseconds)
type Error struct {
	File    string // set by the loader of the file (WithFile)
	Line    int    // 0 when not known
	Key     string // "" when the error is not about one key
	Value   string
	Allowed string // what is allowed, or what is wrong
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	switch {
	case e.Key != "":
		b.WriteString(oneLine(e.Key) + "=" + quoteIfNeeded(e.Value) + ": ")
	case e.Value != "":
		b.WriteString(quoteIfNeeded(e.Value) + ": ")
	}
	b.WriteString(oneLine(e.Allowed))
	return b.String()
}

// quoteIfNeeded quotes a value that is empty or holds spaces, control
// characters or quotes, so that the error stays one line and shows it
// exactly.
func quoteIfNeeded(v string) string {
	if v == "" || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == '"' || r == 0x7f || !strconv.IsPrint(r) }) {
		return strconv.Quote(v)
	}
	return v
}

func oneLine(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		return strings.Trim(strconv.Quote(s), `"`)
	}
	return s
}

// WithFile sets the file of err when it is an *Error without one, and
// prefixes other errors with the file name.
func WithFile(err error, file string) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if e.File == "" {
			e.File = file
		}
		return err
	}
	return &Error{File: file, Allowed: err.Error()}
}

// Bad is the error for p's value, with allowed saying what is allowed.
func (p Property) Bad(allowed string) *Error {
	return &Error{Line: p.Line, Key: p.Key, Value: p.Value, Allowed: allowed}
}

// Trimmed is the value without the leading and trailing whitespace and
// control characters that ZooKeeper and Kafka trim (Java's String.trim).
func (p Property) Trimmed() string { return Trim(p.Value) }

// Trim is Java's String.trim: it removes every character <= U+0020 at
// both ends.
func Trim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// Int parses the trimmed value as a decimal integer, as Java's
// Long.parseLong does (an optional sign, digits, nothing else), and checks
// that it is in [lo, hi].
func (p Property) Int(lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(p.Trimmed(), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, p.Bad("must be " + RangeText(lo, hi))
	}
	return n, nil
}

// Bool parses the trimmed value as ZooKeeper and Kafka do: "true" or
// "false", in any case; anything else is an error.
func (p Property) Bool() (bool, error) {
	switch v := p.Trimmed(); {
	case strings.EqualFold(v, "true"):
		return true, nil
	case strings.EqualFold(v, "false"):
		return false, nil
	}
	return false, p.Bad("must be true or false")
}

// RangeText says in words which integers [lo, hi] holds.
func RangeText(lo, hi int64) string {
	if hi == math.MaxInt64 {
		return "an integer >= " + strconv.FormatInt(lo, 10)
	}
	return "an integer from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10)
}
