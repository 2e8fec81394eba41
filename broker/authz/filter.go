package authz

import "strings"

// Filter is an ACL binding filter (AclBindingFilter) of DescribeAcls and
// DeleteAcls. Nil strings match anything; ResourceAny, PatternAny,
// OpAny and PermAny match anything of theirs; PatternMatch matches the
// patterns that would apply to Name (itself, the literal "*", and the
// prefixes of Name).
type Filter struct {
	Type        ResourceType
	Name        *string
	PatternType PatternType
	Principal   *string
	Host        *string
	Operation   Operation
	Permission  Permission
}

// MatchesPattern is ResourcePatternFilter.matches.
func (f *Filter) MatchesPattern(p Pattern) bool {
	if f.Type != ResourceAny && f.Type != p.Type {
		return false
	}
	if f.PatternType != PatternAny && f.PatternType != PatternMatch && f.PatternType != p.PatternType {
		return false
	}
	if f.Name == nil {
		return true
	}
	name := *f.Name
	if f.PatternType == PatternAny || f.PatternType == p.PatternType {
		return name == p.Name
	}
	switch p.PatternType { // f.PatternType is MATCH
	case PatternLiteral:
		return name == p.Name || p.Name == WildcardResource
	case PatternPrefixed:
		return strings.HasPrefix(name, p.Name)
	}
	return false
}

// MatchesEntry is AccessControlEntryFilter.matches: principal and host
// compared as strings (no wildcard expansion).
func (f *Filter) MatchesEntry(e Entry) bool {
	if f.Principal != nil && *f.Principal != e.Principal {
		return false
	}
	if f.Host != nil && *f.Host != e.Host {
		return false
	}
	if f.Operation != OpAny && f.Operation != e.Operation {
		return false
	}
	return f.Permission == PermAny || f.Permission == e.Permission
}

// Matches is AclBindingFilter.matches.
func (f *Filter) Matches(b Binding) bool {
	return f.MatchesPattern(b.Pattern) && f.MatchesEntry(b.Entry)
}

// ExactPatterns are the patterns a filter that names one resource
// exactly can match (ResourcePatternFilter.matchesAtMostOne and
// AclAuthorizer.filterToResources): DeleteAcls looks these up in
// ZooKeeper too, so that ACLs not yet in this broker's cache are deleted.
func (f *Filter) ExactPatterns() []Pattern {
	if f.Type == ResourceAny || f.Name == nil {
		return nil
	}
	switch f.PatternType {
	case PatternLiteral, PatternPrefixed:
		return []Pattern{{f.Type, *f.Name, f.PatternType}}
	case PatternAny:
		return []Pattern{{f.Type, *f.Name, PatternLiteral}, {f.Type, *f.Name, PatternPrefixed}}
	}
	return nil
}
