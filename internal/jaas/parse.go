package jaas

import (
	"fmt"
	"strings"
)

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokQuoted
	tokPunct // one of { } ; =
)

type token struct {
	kind tokKind
	text string
	line int
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "the end of the file"
	case tokQuoted:
		return fmt.Sprintf("%q", t.text)
	}
	return "'" + t.text + "'"
}

// lexer splits the text as Java's ConfigFile sets up StreamTokenizer:
// words of letters, digits and . $ _ - *; quoted strings; // and /* */
// comments; anything else is a one-character token.
type lexer struct {
	src  string
	pos  int
	line int
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c >= 0x80 || strings.IndexByte(".$_-*", c) >= 0
}

func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	if l.pos >= len(l.src) {
		return token{kind: tokEOF, line: l.line}, nil
	}
	c := l.src[l.pos]
	switch {
	case c == '"':
		return l.quoted(c)
	case isWordByte(c):
		start := l.pos
		for l.pos < len(l.src) && isWordByte(l.src[l.pos]) {
			l.pos++
		}
		return token{kind: tokWord, text: l.src[start:l.pos], line: l.line}, nil
	}
	l.pos++
	return token{kind: tokPunct, text: string(c), line: l.line}, nil
}

// skipSpace skips white space and comments.
func (l *lexer) skipSpace() error {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.line++
			l.pos++
		case c <= ' ':
			l.pos++
		case strings.HasPrefix(l.src[l.pos:], "//"):
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			end := strings.Index(l.src[l.pos+2:], "*/")
			if end < 0 {
				return fmt.Errorf("line %d: a /* comment is not closed", l.line)
			}
			l.line += strings.Count(l.src[l.pos:l.pos+2+end], "\n")
			l.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

// quoted reads a string in double quotes q, with StreamTokenizer's escapes
// (\n \t \b \f \r, octal \NNN, and \x for any other x). A string may not
// span lines.
func (l *lexer) quoted(q byte) (token, error) {
	line := l.line
	l.pos++ // the opening quote
	var b strings.Builder
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == q:
			l.pos++
			return token{kind: tokQuoted, text: b.String(), line: line}, nil
		case c == '\n':
			return token{}, fmt.Errorf("line %d: a quoted string is not closed on its line", line)
		case c == '\\' && l.pos+1 < len(l.src):
			l.pos++
			l.escape(&b)
			continue
		}
		b.WriteByte(c)
		l.pos++
	}
	return token{}, fmt.Errorf("line %d: a quoted string is not closed", line)
}

// escape reads the character after a backslash (l.pos is on it).
func (l *lexer) escape(b *strings.Builder) {
	c := l.src[l.pos]
	l.pos++
	switch c {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'r':
		b.WriteByte('\r')
	case '0', '1', '2', '3', '4', '5', '6', '7':
		v := int(c - '0')
		max := 2 // up to three digits, the first at most 3
		if c > '3' {
			max = 1
		}
		for i := 0; i < max && l.pos < len(l.src) && l.src[l.pos] >= '0' && l.src[l.pos] <= '7'; i++ {
			v = v*8 + int(l.src[l.pos]-'0')
			l.pos++
		}
		b.WriteRune(rune(v))
	default:
		b.WriteByte(c)
	}
}

type parser struct {
	lex lexer
}

func (p *parser) next() (token, error) { return p.lex.next() }

func (p *parser) errorf(t token, format string, args ...any) error {
	return fmt.Errorf("line %d: "+format, append([]any{t.line}, args...)...)
}

func (p *parser) expect(punct byte) error {
	t, err := p.next()
	if err != nil {
		return err
	}
	if t.kind != tokPunct || t.text[0] != punct {
		return p.errorf(t, "expected '%c', found %s", punct, t)
	}
	return nil
}

var flags = map[string]bool{"required": true, "requisite": true, "sufficient": true, "optional": true}

// entries reads login module entries up to the closing byte end (0: the
// end of the text), which it consumes.
func (p *parser) entries(end byte) ([]Entry, error) {
	var out []Entry
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		if end == 0 && t.kind == tokEOF || end != 0 && t.kind == tokPunct && t.text[0] == end {
			return out, nil
		}
		if t.kind != tokWord {
			return nil, p.errorf(t, "expected a login module class name, found %s", t)
		}
		e, err := p.entry(t.text)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
}

// entry reads the flag and options of the login module named module, up
// to and with its ';'.
func (p *parser) entry(module string) (Entry, error) {
	t, err := p.next()
	if err != nil {
		return Entry{}, err
	}
	flag := strings.ToLower(t.text)
	if t.kind != tokWord || !flags[flag] {
		return Entry{}, p.errorf(t, "expected the control flag of %s (required, requisite, sufficient or optional), found %s", module, t)
	}
	e := Entry{LoginModule: module, Flag: flag, Options: map[string]string{}}
	for {
		key, err := p.next()
		if err != nil {
			return Entry{}, err
		}
		if key.kind == tokPunct && key.text == ";" {
			return e, nil
		}
		if key.kind != tokWord {
			return Entry{}, p.errorf(key, "expected an option name or ';', found %s", key)
		}
		if err := p.expect('='); err != nil {
			return Entry{}, err
		}
		val, err := p.next()
		if err != nil {
			return Entry{}, err
		}
		if val.kind != tokWord && val.kind != tokQuoted {
			return Entry{}, p.errorf(val, "expected the value of option %s, found %s", key.text, val)
		}
		e.Options[key.text] = val.text
	}
}
