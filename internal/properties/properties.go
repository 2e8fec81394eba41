// Package properties reads Java properties files — zoo.cfg and Kafka's
// server.properties both are — with the rules of Java's
// java.util.Properties.load(Reader), so that a file means to zkafka what it
// means to Apache ZooKeeper and Kafka:
//
//   - A natural line ends at \n, \r or \r\n. A logical line continues on the
//     next natural line when it ends in an odd number of backslashes; the
//     backslash, the line terminator and the whitespace that starts the next
//     line are dropped.
//   - Whitespace is space, tab and form feed. A line that is empty or only
//     whitespace is ignored; a line whose first non-whitespace character is
//     # or ! is a comment (a comment never continues onto the next line).
//   - The key runs from the first non-whitespace character to the first
//     unescaped '=', ':' or whitespace. Whitespace after the key is skipped,
//     then one '=' or ':' if there is one, then whitespace again; the rest
//     of the line is the value, trailing whitespace included. A line with a
//     key only has the empty value.
//   - In keys and values, \t \n \r \f are tab, newline, return and form feed,
//     \uXXXX is a UTF-16 code unit (a surrogate pair of two escapes is one
//     character), and a backslash before any other character stands for that
//     character ("\=" is "=", "\\" is "\", "\b" is "b"). A \u with fewer than
//     four hex digits is an error.
//   - A key given twice keeps its last value.
//
// One difference: ZooKeeper and Kafka call Properties.load(InputStream),
// which decodes the file as ISO 8859-1; Load takes the bytes as UTF-8 (what
// load(Reader) sees through a UTF-8 reader). For ASCII files, which config
// files are in practice, the two are the same.
//
// The package also holds the one error type of a bad configuration value,
// Error, whose text is the single line `zkafka` prints before it exits.
package properties

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Property is one key and its value, with the natural line (from 1) where
// its logical line starts.
type Property struct {
	Key   string
	Value string
	Line  int
}

// Load reads r and returns its properties in file order; a key given more
// than once appears once, at its last place, with its last value.
func Load(r io.Reader) ([]Property, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var all []Property
	lr := lineReader{src: src, line: 1}
	for {
		text, line, ok := lr.next()
		if !ok {
			break
		}
		p, err := splitLine(text)
		if err != nil {
			return nil, &Error{Line: line, Allowed: err.Error()}
		}
		p.Line = line
		all = append(all, p)
	}
	return lastOfEachKey(all), nil
}

// lastOfEachKey keeps, for each key, its last occurrence, in file order.
func lastOfEachKey(all []Property) []Property {
	last := make(map[string]int, len(all))
	for i, p := range all {
		last[p.Key] = i
	}
	out := all[:0]
	for i, p := range all {
		if last[p.Key] == i {
			out = append(out, p)
		}
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// lineReader splits the source into logical lines, as Java's
// Properties.LineReader does: comments and blank lines are skipped,
// continuations joined. Escapes other than an escaped line end are kept for
// splitLine.
type lineReader struct {
	src  []byte
	pos  int
	line int // natural line number at pos
}

// next returns the next logical line and the natural line it starts on.
func (lr *lineReader) next() (text []byte, start int, ok bool) {
	var buf []byte
	skipSpace := true // skipping whitespace at the start of a natural line
	continued := false
	backslash := false // buf ends in an odd number of backslashes
	for lr.pos < len(lr.src) {
		c := lr.src[lr.pos]
		lr.pos++
		if skipSpace {
			if isSpace(c) {
				continue
			}
			if !continued && (c == '\r' || c == '\n') {
				lr.endOfLine(c)
				continue
			}
			skipSpace, continued = false, false
		}
		if len(buf) == 0 && start == 0 {
			start = lr.line
		}
		if len(buf) == 0 && (c == '#' || c == '!') {
			lr.skipComment()
			skipSpace, start = true, 0
			continue
		}
		if c != '\n' && c != '\r' {
			buf = append(buf, c)
			backslash = c == '\\' && !backslash
			continue
		}
		lr.endOfLine(c)
		if len(buf) == 0 {
			skipSpace, start = true, 0
			continue
		}
		if !backslash {
			return buf, start, true
		}
		buf = buf[:len(buf)-1]
		skipSpace, continued, backslash = true, true, false
	}
	if len(buf) == 0 {
		return nil, 0, false
	}
	if backslash {
		buf = buf[:len(buf)-1]
	}
	return buf, start, true
}

// endOfLine counts the natural line that c (\r or \n) ends, and consumes
// the \n of a \r\n.
func (lr *lineReader) endOfLine(c byte) {
	lr.line++
	if c == '\r' && lr.pos < len(lr.src) && lr.src[lr.pos] == '\n' {
		lr.pos++
	}
}

// skipComment consumes the rest of a comment line and its terminator.
func (lr *lineReader) skipComment() {
	for lr.pos < len(lr.src) {
		c := lr.src[lr.pos]
		lr.pos++
		if c == '\r' || c == '\n' {
			lr.endOfLine(c)
			return
		}
	}
}

// splitLine splits a logical line into its key and value and unescapes them.
func splitLine(line []byte) (Property, error) {
	keyEnd, valueStart := len(line), len(line)
	hasSep, backslash := false, false
	for i, c := range line {
		if !backslash && (c == '=' || c == ':') {
			keyEnd, valueStart, hasSep = i, i+1, true
			break
		}
		if !backslash && isSpace(c) {
			keyEnd, valueStart = i, i+1
			break
		}
		backslash = c == '\\' && !backslash
	}
	for valueStart < len(line) {
		c := line[valueStart]
		if !isSpace(c) {
			if hasSep || (c != '=' && c != ':') {
				break
			}
			hasSep = true
		}
		valueStart++
	}
	key, err := unescape(line[:keyEnd])
	if err != nil {
		return Property{}, err
	}
	value, err := unescape(line[valueStart:])
	if err != nil {
		return Property{}, err
	}
	return Property{Key: key, Value: value}, nil
}

// unescape applies the backslash escapes of a key or value.
func unescape(s []byte) (string, error) {
	i := strings.IndexByte(string(s), '\\')
	if i < 0 {
		return string(s), nil
	}
	out := make([]byte, 0, len(s))
	out = append(out, s[:i]...)
	var high rune // a pending high surrogate from a \u escape
	for i < len(s) {
		c := s[i]
		i++
		if c != '\\' || i == len(s) {
			out, high = flushSurrogate(out, high), 0
			out = append(out, c)
			continue
		}
		c = s[i]
		i++
		if c != 'u' {
			out, high = flushSurrogate(out, high), 0
			out = append(out, unescapeChar(c))
			continue
		}
		if i+4 > len(s) {
			return "", fmt.Errorf(`malformed \uxxxx escape`)
		}
		n, err := strconv.ParseUint(string(s[i:i+4]), 16, 16)
		if err != nil {
			return "", fmt.Errorf(`malformed \uxxxx escape`)
		}
		i += 4
		out, high = appendUTF16(out, high, rune(n))
	}
	return string(flushSurrogate(out, high)), nil
}

func unescapeChar(c byte) byte {
	switch c {
	case 't':
		return '\t'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 'f':
		return '\f'
	}
	return c
}

// appendUTF16 appends the UTF-16 code unit u, pairing it with a pending
// high surrogate; it returns the new pending high surrogate.
func appendUTF16(out []byte, high, u rune) ([]byte, rune) {
	if high != 0 {
		if r := utf16.DecodeRune(high, u); r != utf8.RuneError {
			return utf8.AppendRune(out, r), 0
		}
		out = flushSurrogate(out, high)
	}
	if utf16.IsSurrogate(u) && u < 0xDC00 {
		return out, u
	}
	return utf8.AppendRune(out, u), 0
}

// flushSurrogate writes a lone surrogate, which UTF-8 cannot hold, as
// U+FFFD (what Java's UTF-8 encoder writes for one is '?').
func flushSurrogate(out []byte, high rune) []byte {
	if high == 0 {
		return out
	}
	return utf8.AppendRune(out, utf8.RuneError)
}
