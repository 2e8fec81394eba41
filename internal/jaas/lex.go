package jaas

import (
	"fmt"
	"strings"
)

// Token kinds: the punctuation characters stand for themselves.
const (
	tokEOF = iota + 256
	tokWord
	tokQuoted
)

type token struct {
	kind int
	text string
	line int
}

// describe names a token in an error without its text: a word or quoted
// value may be a password.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "the end"
	case tokWord:
		return "a word"
	case tokQuoted:
		return "a quoted string"
	}
	return fmt.Sprintf("%q", rune(t.kind))
}

type lexer struct {
	src  string
	pos  int
	line int
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._$-/:@+*!?%&~#,[]", c) >= 0
}

// next returns the next token, skipping white space and comments.
func (l *lexer) next() (token, error) {
	if err := l.skip(); err != nil {
		return token{}, err
	}
	if l.pos >= len(l.src) {
		return token{kind: tokEOF, line: l.line}, nil
	}
	c := l.src[l.pos]
	switch {
	case c == '{' || c == '}' || c == ';' || c == '=':
		l.pos++
		return token{kind: int(c), text: string(c), line: l.line}, nil
	case c == '"' || c == '\'':
		return l.quoted(c)
	case isWordByte(c):
		start := l.pos
		for l.pos < len(l.src) && isWordByte(l.src[l.pos]) {
			l.pos++
		}
		return token{kind: tokWord, text: l.src[start:l.pos], line: l.line}, nil
	}
	return token{}, fmt.Errorf("line %d: unexpected character %q", l.line, c)
}

// skip passes white space and comments.
func (l *lexer) skip() error {
	for l.pos < len(l.src) {
		switch c := l.src[l.pos]; {
		case c == '\n':
			l.line++
			l.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			l.pos++
		case strings.HasPrefix(l.src[l.pos:], "//"):
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			end := strings.Index(l.src[l.pos+2:], "*/")
			if end < 0 {
				return fmt.Errorf("line %d: unterminated /* comment", l.line)
			}
			l.line += strings.Count(l.src[l.pos:l.pos+2+end], "\n")
			l.pos += end + 4
		default:
			return nil
		}
	}
	return nil
}

// quoted reads a string quoted by q, with backslash escapes.
func (l *lexer) quoted(q byte) (token, error) {
	line := l.line
	l.pos++
	var b strings.Builder
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		l.pos++
		switch {
		case c == q:
			return token{kind: tokQuoted, text: b.String(), line: line}, nil
		case c == '\n':
			return token{}, fmt.Errorf("line %d: unterminated quoted string", line)
		case c == '\\' && l.pos < len(l.src):
			e := l.src[l.pos]
			l.pos++
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return token{}, fmt.Errorf("line %d: unterminated quoted string", line)
}
