package x509name

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Mapper is Kafka's SslPrincipalMapper: ssl.principal.mapping.rules, a
// comma-separated list of rules tried in order on a certificate's DN,
// the first that applies giving the principal's name:
//
//	DEFAULT                        the DN as it is
//	RULE:pattern/replacement/[LU]  if pattern matches the whole DN, the DN
//	                               with pattern replaced (Java's $n group
//	                               references), lower- or upper-cased
//
// For example RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT turns
// "CN=kafka1,OU=ServiceUsers,O=Example" into "kafka1" and keeps other DNs.
// The patterns are Go regular expressions, which accept what such rules
// are written with (Java's syntax less back-references and look-arounds).
type Mapper struct {
	rules []mappingRule
}

type mappingRule struct {
	isDefault  bool
	pattern    *regexp.Regexp
	template   string // replacement as a regexp.Expand template
	lower, upp bool
}

// The grammar of SslPrincipalMapper's RULE_PATTERN and RULE_SPLITTER.
const rulePattern = `(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`

var (
	ruleSplitter = regexp.MustCompile(`\s*(` + rulePattern + `)\s*(,\s*|$)`)
	ruleParser   = regexp.MustCompile(`^(?:` + rulePattern + `)`)
)

// ParseMappingRules reads ssl.principal.mapping.rules ("" is DEFAULT).
func ParseMappingRules(s string) (*Mapper, error) {
	if strings.TrimSpace(s) == "" {
		s = "DEFAULT"
	}
	m := &Mapper{}
	for _, parts := range ruleSplitter.FindAllStringSubmatch(strings.TrimSpace(s), -1) {
		rule := parts[1]
		g := ruleParser.FindStringSubmatchIndex(rule)
		if g == nil || g[1] != len(rule) {
			return nil, fmt.Errorf("invalid rule %q", rule)
		}
		group := func(i int) (string, bool) {
			if g[2*i] < 0 {
				return "", false
			}
			return rule[g[2*i]:g[2*i+1]], true
		}
		if _, ok := group(1); ok {
			m.rules = append(m.rules, mappingRule{isDefault: true})
			continue
		}
		pat, ok := group(2)
		if !ok {
			continue // an empty rule is ignored
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("rule %q: %w", rule, err)
		}
		repl, _ := group(4)
		flag, _ := group(6)
		m.rules = append(m.rules, mappingRule{pattern: re, template: javaReplacement(repl, re.NumSubexp()),
			lower: flag == "L", upp: flag == "U"})
	}
	return m, nil
}

// Name maps a DN to the principal's name; an error when no rule applies
// (Kafka fails the connection's authentication then).
func (m *Mapper) Name(dn string) (string, error) {
	for _, r := range m.rules {
		if r.isDefault {
			return dn, nil
		}
		loc := r.pattern.FindStringSubmatchIndex(dn)
		if loc == nil || loc[0] != 0 || loc[1] != len(dn) {
			continue // Java's matches(): the whole DN
		}
		out := string(r.pattern.ExpandString(nil, r.template, dn, loc))
		switch {
		case r.lower:
			out = strings.ToLower(out)
		case r.upp:
			out = strings.ToUpper(out)
		}
		return out, nil
	}
	return "", fmt.Errorf("no ssl.principal.mapping.rules rule applies to %s", dn)
}

// javaReplacement turns a Java replacement string into a regexp.Expand
// template: \x is a literal x; $n refers to group n, its digits taken
// while they name a group (Java's appendReplacement), a reference past
// the last group being literal text (Kafka's escapeLiteralBackReferences);
// ${name} is a named group.
func javaReplacement(s string, groups int) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(s[i])
			}
		case c == '$' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i + 1
			n := int(s[j] - '0')
			for j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9' && n*10+int(s[j+1]-'0') <= groups {
				j++
				n = n*10 + int(s[j]-'0')
			}
			if n > groups {
				b.WriteString("$$" + s[i+1:j+1])
			} else {
				b.WriteString("${" + strconv.Itoa(n) + "}")
			}
			i = j
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			b.WriteByte('$') // ${name}: the same in both
		case c == '$':
			b.WriteString("$$")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
