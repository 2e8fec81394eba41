// Package jaas reads JAAS login configurations as Java's ConfigFile and
// Kafka's JaasConfig read them: the file named by the
// java.security.auth.login.config system property (sections such as
// KafkaServer, Client or ZooKeeper's Server), and the inline value of
// Kafka's sasl.jaas.config keys (one or more login modules without a
// section). zkafka needs only the options of the modules (user_NAME,
// username, password); the modules themselves are named, never loaded.
//
// # Grammar
//
//	file    = { Name "{" { module } "}" ";" }
//	inline  = module { module }
//	module  = ClassName Flag { key "=" value } ";"
//	Flag    = required | requisite | sufficient | optional
//	value   = "quoted" | 'quoted' | word
//
// Comments are // to the end of the line and /* ... */, as Java's
// StreamTokenizer skips them; a quoted value takes \" \\ \n \t escapes.
package jaas

import (
	"fmt"
	"os"
	"strings"
)

// Module is one login module entry: its class, its control flag and its
// options, in the order written (a repeated option keeps its last value).
type Module struct {
	Class   string
	Flag    string
	Options map[string]string
}

// Config is a JAAS file: the login modules of each section, by the
// section's name (case-sensitive, as Java's).
type Config map[string][]Module

// LoadFile reads and parses the JAAS file at path.
func LoadFile(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse parses the text of a JAAS file.
func Parse(src string) (Config, error) {
	p := &parser{lx: lexer{src: src, line: 1}}
	c := Config{}
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tokEOF {
			return c, nil
		}
		if t.kind != tokWord {
			return nil, p.errorf(t, "want a section name, got %s", t.describe())
		}
		if err := p.expect('{'); err != nil {
			return nil, err
		}
		var mods []Module
		for {
			t, err := p.peek()
			if err != nil {
				return nil, err
			}
			if t.kind == '}' {
				p.take()
				break
			}
			m, err := p.module()
			if err != nil {
				return nil, err
			}
			mods = append(mods, m)
		}
		if err := p.expect(';'); err != nil {
			return nil, err
		}
		c[t.text] = append(c[t.text], mods...)
	}
}

// ParseModules parses an inline configuration (the value of a
// sasl.jaas.config key): at least one module, each ending with ';'.
func ParseModules(src string) ([]Module, error) {
	p := &parser{lx: lexer{src: src, line: 1}}
	var mods []Module
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if t.kind == tokEOF {
			break
		}
		m, err := p.module()
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("no login module (want: ClassName required key=\"value\" ...;)")
	}
	return mods, nil
}

// JVMProperty finds -Dname=value among JVM flags as the environment gives
// them (KAFKA_OPTS, SERVER_JVMFLAGS): words split on white space, a value
// quoted as a shell would keep its spaces. The last one wins, as in Java.
func JVMProperty(flags, name string) (string, bool) {
	var val string
	found := false
	for _, w := range shellWords(flags) {
		if v, ok := strings.CutPrefix(w, "-D"+name+"="); ok {
			val, found = v, true
		}
	}
	return val, found
}

// shellWords splits s into words on white space, with single and double
// quotes grouping (and removed).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// Option is the value of the option key in the first module of mods
// whose class ends with classSuffix that has it.
func Option(mods []Module, classSuffix, key string) (string, bool) {
	for _, m := range mods {
		if strings.HasSuffix(m.Class, classSuffix) {
			if v, ok := m.Options[key]; ok {
				return v, true
			}
		}
	}
	return "", false
}

var flags = map[string]bool{"required": true, "requisite": true, "sufficient": true, "optional": true}

type parser struct {
	lx     lexer
	peeked *token
}

func (p *parser) next() (token, error) {
	if p.peeked != nil {
		t := *p.peeked
		p.peeked = nil
		return t, nil
	}
	return p.lx.next()
}

func (p *parser) peek() (token, error) {
	if p.peeked == nil {
		t, err := p.lx.next()
		if err != nil {
			return t, err
		}
		p.peeked = &t
	}
	return *p.peeked, nil
}

func (p *parser) take() { p.peeked = nil }

func (p *parser) expect(kind int) error {
	t, err := p.next()
	if err != nil {
		return err
	}
	if t.kind != kind {
		return p.errorf(t, "want %q, got %s", rune(kind), t.describe())
	}
	return nil
}

func (p *parser) errorf(t token, format string, args ...any) error {
	return fmt.Errorf("line %d: %s", t.line, fmt.Sprintf(format, args...))
}

// module parses ClassName Flag options ';'.
func (p *parser) module() (Module, error) {
	class, err := p.next()
	if err != nil {
		return Module{}, err
	}
	if class.kind != tokWord {
		return Module{}, p.errorf(class, "want a login module class name, got %s", class.describe())
	}
	flag, err := p.next()
	if err != nil {
		return Module{}, err
	}
	if flag.kind != tokWord || !flags[strings.ToLower(flag.text)] {
		return Module{}, p.errorf(flag, "login module %s: want a flag (required, requisite, sufficient, optional), got %s", class.text, flag.describe())
	}
	m := Module{Class: class.text, Flag: strings.ToLower(flag.text), Options: map[string]string{}}
	for {
		t, err := p.next()
		if err != nil {
			return m, err
		}
		if t.kind == ';' {
			return m, nil
		}
		if t.kind != tokWord {
			return m, p.errorf(t, "login module %s: want an option name or ';', got %s", class.text, t.describe())
		}
		if err := p.expect('='); err != nil {
			return m, err
		}
		v, err := p.next()
		if err != nil {
			return m, err
		}
		if v.kind != tokWord && v.kind != tokQuoted {
			return m, p.errorf(v, "login module %s: option %s has no value", class.text, t.text)
		}
		m.Options[t.text] = v.text
	}
}
