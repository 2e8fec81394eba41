package digestmd5

import (
	"errors"
	"fmt"
	"strings"
)

// maxToken bounds a response as Java's DigestMD5Server does (4096 bytes).
const maxToken = 4096

// parseDirectives reads a comma-separated list of name=value directives,
// the value a token or a quoted-string (RFC 2831 section 7.1: empty list
// elements and white space around them allowed). Names are lower-cased. A
// name given twice is an error unless multi holds it (realm in a
// challenge), whose first value is kept.
func parseDirectives(b []byte, multi map[string]bool) (map[string]string, error) {
	out := map[string]string{}
	s := string(b)
	for {
		s = strings.TrimLeft(s, " \t\r\n,")
		if s == "" {
			return out, nil
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("directive without a value: %.40q", s)
		}
		name := strings.ToLower(strings.TrimSpace(s[:eq]))
		if name == "" || strings.ContainsAny(name, " \t\",") {
			return nil, fmt.Errorf("bad directive name %.40q", s[:eq])
		}
		s = strings.TrimLeft(s[eq+1:], " \t\r\n")
		var val string
		var err error
		if strings.HasPrefix(s, `"`) {
			val, s, err = quotedString(s)
			if err != nil {
				return nil, fmt.Errorf("directive %s: %w", name, err)
			}
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			val, s = strings.TrimSpace(s[:end]), s[end:]
		}
		s = strings.TrimLeft(s, " \t\r\n")
		if s != "" && s[0] != ',' {
			return nil, fmt.Errorf("directive %s: text after its value", name)
		}
		if _, dup := out[name]; dup {
			if multi[name] {
				continue
			}
			return nil, fmt.Errorf("directive %s given twice", name)
		}
		out[name] = val
	}
}

// quotedString reads a quoted-string at the start of s (with \-quoted
// pairs) and returns its value and the rest of s.
func quotedString(s string) (val, rest string, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("quoted string not closed")
}

// quote writes v as a quoted-string.
func quote(v string) string {
	if !strings.ContainsAny(v, `"\`) {
		return `"` + v + `"`
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if v[i] == '"' || v[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
	return b.String()
}
