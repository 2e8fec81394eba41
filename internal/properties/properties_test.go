package properties

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// loadCases are inputs with the properties Java's Properties.load(Reader)
// gives for them (from its Javadoc; compat_test.go checks them against a
// real JVM). A nil want means load fails.
var loadCases = []struct {
	name, in string
	want     []Property
}{
	{"empty", "", []Property{}},
	{"equals", "a=b\n", []Property{{"a", "b", 1}}},
	{"colon", "a:b", []Property{{"a", "b", 1}}},
	{"space separator", "a b", []Property{{"a", "b", 1}}},
	{"space around separator", "  a  =  b", []Property{{"a", "b", 1}}},
	{"spaces then colon", "a \t\f: b", []Property{{"a", "b", 1}}},
	{"second separator is value", "a==b", []Property{{"a", "=b", 1}}},
	{"space then two separators", "a = :b", []Property{{"a", ":b", 1}}},
	{"trailing whitespace kept", "a=b \t", []Property{{"a", "b \t", 1}}},
	{"key only", "a", []Property{{"a", "", 1}}},
	{"key and separator only", "a=", []Property{{"a", "", 1}}},
	{"empty key", "=b", []Property{{"", "b", 1}}},
	{"colon empty key", ":b", []Property{{"", "b", 1}}},
	{"hash comment", "# a=b\nc=d", []Property{{"c", "d", 2}}},
	{"bang comment", "  ! a=b\nc=d", []Property{{"c", "d", 2}}},
	{"hash in value", "a=b#c", []Property{{"a", "b#c", 1}}},
	{"comment does not continue", "#a\\\nb=c", []Property{{"b", "c", 2}}},
	{"blank lines", "\n \t\n\f\na=b\n\n", []Property{{"a", "b", 4}}},
	{"continuation", "a=b\\\n   c", []Property{{"a", "bc", 1}}},
	{"continuation in key", "ke\\\n  y=v", []Property{{"key", "v", 1}}},
	{"continuation then blank line ends", "a=b\\\n\nc=d", []Property{{"a", "b", 1}, {"c", "d", 3}}},
	{"continuation keeps hash", "a=b\\\n #c", []Property{{"a", "b#c", 1}}},
	{"even backslashes do not continue", "a=b\\\\\nc=d", []Property{{"a", `b\`, 1}, {"c", "d", 2}}},
	{"three backslashes continue", "a=b\\\\\\\nc", []Property{{"a", `b\c`, 1}}},
	{"backslash at end of file dropped", "a=b\\", []Property{{"a", "b", 1}}},
	{"CRLF", "a=b\r\nc=d\r\n", []Property{{"a", "b", 1}, {"c", "d", 2}}},
	{"CR", "a=b\rc=d", []Property{{"a", "b", 1}, {"c", "d", 2}}},
	{"CRLF continuation", "a=b\\\r\n  c\r\n", []Property{{"a", "bc", 1}}},
	{"escaped separators in key", `a\=b\:c\ d=e`, []Property{{"a=b:c d", "e", 1}}},
	{"escapes", `a=\t\n\r\f\\\b\z`, []Property{{"a", "\t\n\r\f\\bz", 1}}},
	{"unicode escape", `a=\u00e9\u0041`, []Property{{"a", "éA", 1}}},
	{"surrogate pair", `a=\ud83d\ude00`, []Property{{"a", "😀", 1}}},
	{"utf-8 kept", "clé=valé", []Property{{"clé", "valé", 1}}},
	{"short unicode escape", `a=\u12`, nil},
	{"bad unicode escape", `a=\u12g4`, nil},
	{"duplicate keeps last, at its place", "a=1\nb=2\na=3", []Property{{"b", "2", 2}, {"a", "3", 3}}},
	{"windows path", `dataDir=C:\\zk\\data`, []Property{{"dataDir", `C:\zk\data`, 1}}},
	{"unescaped windows path", `dataDir=C:\zk\data`, []Property{{"dataDir", `C:zkdata`, 1}}},
	{"server line", "server.1=zk1:2888:3888;2181", []Property{{"server.1", "zk1:2888:3888;2181", 1}}},
	{"line after continuation of empty", "\\\n#x=1", []Property{}},
}

func TestLoad(t *testing.T) {
	for _, tc := range loadCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load(strings.NewReader(tc.in))
			if tc.want == nil {
				var e *Error
				if !errors.As(err, &e) || e.Line != 1 {
					t.Fatalf("Load(%q) = %v, %v; want an *Error on line 1", tc.in, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load(%q): %v", tc.in, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("Load(%q)\n got %+v\nwant %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestErrorIsOneLine(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{File: "zoo.cfg", Line: 3, Key: "tickTime", Value: "0", Allowed: "must be >= 1"}, "zoo.cfg:3: tickTime=0: must be >= 1"},
		{&Error{File: "zoo.cfg", Key: "dataDir", Allowed: "must be set"}, `zoo.cfg: dataDir="": must be set`},
		{&Error{Key: "a", Value: "x\ny", Allowed: "bad"}, `a="x\ny": bad`},
		{&Error{File: "myid", Value: "x", Allowed: "bad\nthing"}, `myid: x: bad\nthing`},
	} {
		if got := tc.err.Error(); got != tc.want || strings.ContainsAny(got, "\r\n") {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	err := WithFile(Property{Key: "k", Value: "v", Line: 2}.Bad("no"), "f.properties")
	if err.Error() != "f.properties:2: k=v: no" {
		t.Errorf("WithFile: %q", err)
	}
}

func TestIntAndBool(t *testing.T) {
	for _, tc := range []struct {
		v      string
		lo, hi int64
		want   int64
		ok     bool
	}{
		{"5", 1, 10, 5, true}, {" 5\t", 1, 10, 5, true}, {"+5", 1, 10, 5, true}, {"-1", -1, 10, -1, true},
		{"0", 1, 10, 0, false}, {"11", 1, 10, 0, false}, {"5ms", 1, 10, 0, false}, {"0x5", 1, 10, 0, false},
		{"1_0", 1, 100, 0, false}, {"", 1, 10, 0, false}, {"5.0", 1, 10, 0, false},
		{"9223372036854775808", 0, 1 << 62, 0, false},
	} {
		n, err := Property{Key: "k", Value: tc.v}.Int(tc.lo, tc.hi)
		if (err == nil) != tc.ok || n != tc.want {
			t.Errorf("Int(%q, %d, %d) = %d, %v", tc.v, tc.lo, tc.hi, n, err)
		}
	}
	for v, want := range map[string]any{"true": true, "TRUE": true, " False ": false, "yes": nil, "1": nil, "": nil} {
		b, err := Property{Key: "k", Value: v}.Bool()
		if want == nil && err == nil || want != nil && (err != nil || b != want) {
			t.Errorf("Bool(%q) = %v, %v", v, b, err)
		}
	}
}

// FuzzLoad checks that Load never panics, that every line number is within
// the input, and that writing the result back and loading it again gives
// the same properties.
func FuzzLoad(f *testing.F) {
	for _, tc := range loadCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Load(strings.NewReader(in))
		if err != nil {
			return
		}
		lines := strings.Count(in, "\n") + strings.Count(in, "\r") + 1
		var b strings.Builder
		for _, p := range got {
			if p.Line < 1 || p.Line > lines {
				t.Fatalf("line %d outside 1..%d", p.Line, lines)
			}
			b.WriteString(escape(p.Key, true) + "=" + escape(p.Value, false) + "\n")
		}
		again, err := Load(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("reloading %q: %v", b.String(), err)
		}
		for i := range again {
			if i >= len(got) || again[i].Key != got[i].Key || again[i].Value != got[i].Value {
				t.Fatalf("round trip of %q: %+v, want %+v", in, again, got)
			}
		}
	})
}

// escape writes s as Properties.store does (byte by byte: every special
// character is ASCII, and other bytes, even invalid UTF-8, pass through).
func escape(s string, key bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '=' || c == ':' || c == '#' || c == '!':
			b.WriteString(`\` + string(c))
		case c == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\f':
			b.WriteString(`\f`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
