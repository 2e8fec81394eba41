package jaas

import (
	"fmt"
	"os"
	"strings"
)

// Entry is one login module of a section.
type Entry struct {
	LoginModule string            // the class name
	Flag        string            // required, requisite, sufficient or optional (lower case)
	Options     map[string]string // key=value options, in no order
}

// File is a JAAS configuration: the entries of each section by name.
type File map[string][]Entry

// Load reads and parses the JAAS file at path.
func Load(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Parse parses a JAAS configuration file's text. A section named twice is
// an error, as in Java ("Can not specify multiple entries for ...").
func Parse(src string) (File, error) {
	p := parser{lex: lexer{src: src, line: 1}}
	f := File{}
	for {
		tok, err := p.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokEOF {
			return f, nil
		}
		if tok.kind != tokWord && tok.kind != tokQuoted {
			return nil, p.errorf(tok, "expected a section name, found %s", tok)
		}
		if _, dup := f[tok.text]; dup {
			return nil, p.errorf(tok, "section %q is given twice", tok.text)
		}
		if err := p.expect('{'); err != nil {
			return nil, err
		}
		entries, err := p.entries('}')
		if err != nil {
			return nil, err
		}
		if err := p.expect(';'); err != nil {
			return nil, err
		}
		if len(entries) > 0 { // Java drops a section without entries
			f[tok.text] = entries
		}
	}
}

// ParseEntries parses login module entries without a section around them:
// Kafka's sasl.jaas.config ("...PlainLoginModule required username=... ;").
func ParseEntries(src string) ([]Entry, error) {
	p := parser{lex: lexer{src: src, line: 1}}
	return p.entries(0)
}

// DigestUsers are the user_NAME="password" options of entries, as
// ZooKeeper's SaslServerCallbackHandler and Kafka's PLAIN server collect
// them (from every entry of the section, a later one winning).
func DigestUsers(entries []Entry) map[string]string {
	users := map[string]string{}
	for _, e := range entries {
		for k, v := range e.Options {
			if name, ok := strings.CutPrefix(k, "user_"); ok {
				users[name] = v
			}
		}
	}
	return users
}

// JVMProperty returns the value of the system property name among JVM
// flags (each string a shell-split list such as $SERVER_JVMFLAGS, in the
// order the java command line has them); the last -Dname=value wins, as in
// Java.
func JVMProperty(name string, flags ...string) (string, bool) {
	var val string
	found := false
	for _, fl := range flags {
		for _, f := range strings.Fields(fl) {
			if v, ok := strings.CutPrefix(f, "-D"+name+"="); ok {
				val, found = v, true
			} else if f == "-D"+name {
				val, found = "", true
			}
		}
	}
	return val, found
}
