package authz

import (
	"slices"
	"strings"
	"sync"
)

// Cache holds every ACL by pattern, and answers authorization questions
// with the rules of AclAuthorizer (see the package doc).
type Cache struct {
	superUsers     map[string]bool
	allowIfNoACL   bool
	mu             sync.RWMutex
	acls           map[Pattern][]Entry // never an empty slice
	patternsByType map[ResourceType]map[Pattern]struct{}
}

// NewCache makes an empty cache. superUsers are principals ("User:admin")
// allowed everything; allowIfNoACL is allow.everyone.if.no.acl.found.
func NewCache(superUsers []string, allowIfNoACL bool) *Cache {
	c := &Cache{superUsers: map[string]bool{}, allowIfNoACL: allowIfNoACL, acls: map[Pattern][]Entry{},
		patternsByType: map[ResourceType]map[Pattern]struct{}{}}
	for _, u := range superUsers {
		c.superUsers[u] = true
	}
	return c
}

// IsSuperUser reports whether principal is in super.users.
func (c *Cache) IsSuperUser(principal string) bool { return c.superUsers[principal] }

// Set replaces the entries of p (none: p is removed).
func (c *Cache) Set(p Pattern, entries []Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byType := c.patternsByType[p.Type]
	if len(entries) == 0 {
		delete(c.acls, p)
		delete(byType, p)
		return
	}
	c.acls[p] = slices.Clone(entries)
	if byType == nil {
		byType = map[Pattern]struct{}{}
		c.patternsByType[p.Type] = byType
	}
	byType[p] = struct{}{}
}

// Get returns a copy of p's entries.
func (c *Cache) Get(p Pattern) ([]Entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.acls[p]
	return slices.Clone(e), ok
}

// Patterns lists every pattern with ACLs, in the order of Kafka's ACL
// cache (ResourceOrdering: resource type, pattern type, then name in
// reverse order).
func (c *Cache) Patterns() []Pattern {
	c.mu.RLock()
	out := make([]Pattern, 0, len(c.acls))
	for p := range c.acls {
		out = append(out, p)
	}
	c.mu.RUnlock()
	slices.SortFunc(out, ComparePatterns)
	return out
}

// ComparePatterns is Kafka's ResourceOrdering.
func ComparePatterns(a, b Pattern) int {
	if a.Type != b.Type {
		return int(a.Type) - int(b.Type)
	}
	if a.PatternType != b.PatternType {
		return int(a.PatternType) - int(b.PatternType)
	}
	return -strings.Compare(a.Name, b.Name)
}

// Bindings are the ACLs matching f, in cache order (AclAuthorizer.acls).
func (c *Cache) Bindings(f *Filter) []Binding {
	var out []Binding
	for _, p := range c.Patterns() {
		if !f.MatchesPattern(p) {
			continue
		}
		entries, _ := c.Get(p)
		for _, e := range entries {
			if f.MatchesEntry(e) {
				out = append(out, Binding{p, e})
			}
		}
	}
	return out
}

// Request is who asks: the principal ("User:alice") and the client's IP
// address as text.
type Request struct {
	Principal string
	Host      string
}

// Authorize decides op on the literal resource (rt, name) for r. A
// request without a principal is refused everything.
func (c *Cache) Authorize(r Request, op Operation, rt ResourceType, name string) bool {
	if r.Principal == "" {
		return false
	}
	if c.superUsers[r.Principal] {
		return true
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	var applying [][]Entry
	if e := c.acls[Pattern{rt, WildcardResource, PatternLiteral}]; e != nil {
		applying = append(applying, e)
	}
	if e := c.acls[Pattern{rt, name, PatternLiteral}]; e != nil && name != WildcardResource {
		applying = append(applying, e)
	}
	if len(c.patternsByType[rt]) > 0 {
		for i := 1; i <= len(name); i++ {
			if e := c.acls[Pattern{rt, name[:i], PatternPrefixed}]; e != nil {
				applying = append(applying, e)
			}
		}
	}
	if len(applying) == 0 {
		return c.allowIfNoACL
	}
	if anyMatch(applying, r, []Operation{op}, PermDeny) {
		return false
	}
	return anyMatch(applying, r, Implied(op), PermAllow)
}

// anyMatch reports whether an entry of sets with perm applies to r for
// one of ops (or All).
func anyMatch(sets [][]Entry, r Request, ops []Operation, perm Permission) bool {
	for _, set := range sets {
		for _, e := range set {
			if e.Permission == perm && entryApplies(e, r) &&
				(e.Operation == OpAll || slices.Contains(ops, e.Operation)) {
				return true
			}
		}
	}
	return false
}

func entryApplies(e Entry, r Request) bool {
	return (e.Principal == r.Principal || e.Principal == WildcardPrincipal) &&
		(e.Host == r.Host || e.Host == WildcardHost)
}

// AuthorizedOperations is the bit field of the operations of
// SupportedOperations(rt) that r may do on (rt, name): bit n is the
// operation with code n (KafkaApis' authorizedOperations).
func (c *Cache) AuthorizedOperations(r Request, rt ResourceType, name string) int32 {
	var bits int32
	for _, op := range SupportedOperations(rt) {
		if c == nil || c.Authorize(r, op, rt, name) {
			bits |= 1 << op
		}
	}
	return bits
}

// AuthorizeByResourceType decides whether r may do op on some resource
// of type rt (AclAuthorizer.authorizeByResourceType): a Deny on the
// literal "*" refuses; allow.everyone.if.no.acl.found allows; otherwise
// an Allow pattern that no Deny dominates (a Deny on the same literal
// name, or a prefixed Deny that is a prefix of it) allows. Implied
// operations do not count here, as in Kafka.
func (c *Cache) AuthorizeByResourceType(r Request, op Operation, rt ResourceType) bool {
	if r.Principal == "" {
		return false
	}
	if c.superUsers[r.Principal] {
		return true
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	names := func(perm Permission, pt PatternType) map[string]bool {
		out := map[string]bool{}
		for p := range c.patternsByType[rt] {
			if p.PatternType == pt && anyMatch([][]Entry{c.acls[p]}, r, []Operation{op}, perm) {
				out[p.Name] = true
			}
		}
		return out
	}
	denyLiterals := names(PermDeny, PatternLiteral)
	if denyLiterals[WildcardResource] {
		return false
	}
	if c.allowIfNoACL {
		return true
	}
	denyPrefixes := names(PermDeny, PatternPrefixed)
	dominated := func(name string) bool {
		for i := 0; i <= len(name); i++ {
			if denyPrefixes[name[:i]] {
				return true
			}
		}
		return false
	}
	for p := range names(PermAllow, PatternPrefixed) {
		if !dominated(p) {
			return true
		}
	}
	for l := range names(PermAllow, PatternLiteral) {
		if l == WildcardResource || !denyLiterals[l] && !dominated(l) {
			return true
		}
	}
	return false
}
