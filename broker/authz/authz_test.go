package authz

import (
	"slices"
	"testing"
)

func lit(t ResourceType, n string) Pattern { return Pattern{t, n, PatternLiteral} }
func pre(t ResourceType, n string) Pattern { return Pattern{t, n, PatternPrefixed} }
func allow(p string, op Operation) Entry   { return Entry{p, "*", op, PermAllow} }
func deny(p string, op Operation) Entry    { return Entry{p, "*", op, PermDeny} }

type acl struct {
	p Pattern
	e Entry
}

func cacheOf(super []string, allowIfNone bool, acls ...acl) *Cache {
	c := NewCache(super, allowIfNone)
	for _, a := range acls {
		cur, _ := c.Get(a.p)
		c.Set(a.p, Union(cur, []Entry{a.e}))
	}
	return c
}

var (
	alice = Request{"User:alice", "127.0.0.1"}
	bob   = Request{"User:bob", "10.0.0.2"}
)

func TestAuthorize(t *testing.T) {
	for _, tc := range []struct {
		name        string
		super       []string
		allowIfNone bool
		acls        []acl
		r           Request
		op          Operation
		rt          ResourceType
		res         string
		want        bool
	}{
		{name: "no acls, default deny", r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: false},
		{name: "no acls, allow.everyone", allowIfNone: true, r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: true},
		{name: "acls elsewhere do not count as none", allowIfNone: true, acls: []acl{{lit(ResourceTopic, "t"), allow("User:bob", OpRead)}},
			r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: false},
		{name: "acls on another topic: none here", allowIfNone: true, acls: []acl{{lit(ResourceTopic, "u"), allow("User:bob", OpRead)}},
			r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: true},
		{name: "super user", super: []string{"User:alice"}, r: alice, op: OpAlter, rt: ResourceCluster, res: ClusterName, want: true},
		{name: "literal allow", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpRead)}}, r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: true},
		{name: "literal allow, other principal", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpRead)}}, r: bob, op: OpRead, rt: ResourceTopic, res: "t", want: false},
		{name: "literal allow, other op", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpRead)}}, r: alice, op: OpWrite, rt: ResourceTopic, res: "t", want: false},
		{name: "literal allow, other type", acls: []acl{{lit(ResourceGroup, "t"), allow("User:alice", OpRead)}}, r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: false},
		{name: "read implies describe", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpRead)}}, r: alice, op: OpDescribe, rt: ResourceTopic, res: "t", want: true},
		{name: "write implies describe", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpWrite)}}, r: alice, op: OpDescribe, rt: ResourceTopic, res: "t", want: true},
		{name: "delete implies describe", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpDelete)}}, r: alice, op: OpDescribe, rt: ResourceTopic, res: "t", want: true},
		{name: "alter implies describe", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpAlter)}}, r: alice, op: OpDescribe, rt: ResourceTopic, res: "t", want: true},
		{name: "create does not imply describe", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpCreate)}}, r: alice, op: OpDescribe, rt: ResourceTopic, res: "t", want: false},
		{name: "describe does not imply read", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpDescribe)}}, r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: false},
		{name: "alter_configs implies describe_configs", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpAlterConfigs)}}, r: alice, op: OpDescribeConfigs, rt: ResourceTopic, res: "t", want: true},
		{name: "all allows everything", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpAll)}}, r: alice, op: OpDelete, rt: ResourceTopic, res: "t", want: true},
		{name: "wildcard resource", acls: []acl{{lit(ResourceTopic, "*"), allow("User:alice", OpRead)}}, r: alice, op: OpRead, rt: ResourceTopic, res: "anything", want: true},
		{name: "wildcard principal", acls: []acl{{lit(ResourceTopic, "t"), allow("User:*", OpRead)}}, r: bob, op: OpRead, rt: ResourceTopic, res: "t", want: true},
		{name: "prefixed", acls: []acl{{pre(ResourceTopic, "fin-"), allow("User:alice", OpWrite)}}, r: alice, op: OpWrite, rt: ResourceTopic, res: "fin-ledger", want: true},
		{name: "prefixed equal name", acls: []acl{{pre(ResourceTopic, "fin-"), allow("User:alice", OpWrite)}}, r: alice, op: OpWrite, rt: ResourceTopic, res: "fin-", want: true},
		{name: "prefixed, not a prefix", acls: []acl{{pre(ResourceTopic, "fin-"), allow("User:alice", OpWrite)}}, r: alice, op: OpWrite, rt: ResourceTopic, res: "fi", want: false},
		{name: "prefixed star is no wildcard", acls: []acl{{pre(ResourceTopic, "*"), allow("User:alice", OpWrite)}}, r: alice, op: OpWrite, rt: ResourceTopic, res: "x", want: false},
		{name: "literal star name only by wildcard", acls: []acl{{lit(ResourceTopic, "fin-*"), allow("User:alice", OpWrite)}}, r: alice, op: OpWrite, rt: ResourceTopic, res: "fin-x", want: false},
		{name: "host matches", acls: []acl{{lit(ResourceTopic, "t"), Entry{"User:alice", "127.0.0.1", OpRead, PermAllow}}}, r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: true},
		{name: "host differs", acls: []acl{{lit(ResourceTopic, "t"), Entry{"User:alice", "10.9.9.9", OpRead, PermAllow}}}, r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: false},
		{name: "deny beats allow", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpRead)}, {lit(ResourceTopic, "t"), deny("User:alice", OpRead)}},
			r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: false},
		{name: "prefixed deny beats literal allow", acls: []acl{{lit(ResourceTopic, "fin-x"), allow("User:alice", OpRead)}, {pre(ResourceTopic, "fin"), deny("User:alice", OpRead)}},
			r: alice, op: OpRead, rt: ResourceTopic, res: "fin-x", want: false},
		{name: "wildcard deny for everyone", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpAll)}, {lit(ResourceTopic, "*"), deny("User:*", OpWrite)}},
			r: alice, op: OpWrite, rt: ResourceTopic, res: "t", want: false},
		{name: "deny all denies read", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpRead)}, {lit(ResourceTopic, "t"), deny("User:alice", OpAll)}},
			r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: false},
		{name: "deny read keeps describe from write", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpWrite)}, {lit(ResourceTopic, "t"), deny("User:alice", OpRead)}},
			r: alice, op: OpDescribe, rt: ResourceTopic, res: "t", want: true},
		{name: "deny on other host does not apply", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpRead)}, {lit(ResourceTopic, "t"), Entry{"User:alice", "10.0.0.1", OpRead, PermDeny}}},
			r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: true},
		{name: "no principal, allow.everyone", allowIfNone: true, r: Request{"", "127.0.0.1"}, op: OpRead, rt: ResourceTopic, res: "t", want: false},
		{name: "no principal, wildcard allow", acls: []acl{{lit(ResourceTopic, "t"), allow("User:*", OpRead)}}, r: Request{"", "127.0.0.1"}, op: OpRead, rt: ResourceTopic, res: "t", want: false},
		{name: "super user beats deny", super: []string{"User:alice"}, acls: []acl{{lit(ResourceTopic, "t"), deny("User:alice", OpAll)}},
			r: alice, op: OpRead, rt: ResourceTopic, res: "t", want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cacheOf(tc.super, tc.allowIfNone, tc.acls...)
			if got := c.Authorize(tc.r, tc.op, tc.rt, tc.res); got != tc.want {
				t.Fatalf("Authorize(%v, %v, %v %q) = %v, want %v", tc.r, tc.op, tc.rt, tc.res, got, tc.want)
			}
		})
	}
}

func TestAuthorizeByResourceType(t *testing.T) {
	for _, tc := range []struct {
		name        string
		allowIfNone bool
		acls        []acl
		want        bool
	}{
		{name: "none", want: false},
		{name: "none, allow.everyone", allowIfNone: true, want: true},
		{name: "literal allow", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpWrite)}}, want: true},
		{name: "read is not write", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpRead)}}, want: false},
		{name: "all", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpAll)}}, want: true},
		{name: "group acl is not a topic", acls: []acl{{lit(ResourceGroup, "t"), allow("User:alice", OpWrite)}}, want: false},
		{name: "prefixed allow", acls: []acl{{pre(ResourceTopic, "a"), allow("User:*", OpWrite)}}, want: true},
		{name: "literal allow, same literal deny", acls: []acl{{lit(ResourceTopic, "t"), allow("User:alice", OpWrite)}, {lit(ResourceTopic, "t"), deny("User:alice", OpWrite)}}, want: false},
		{name: "literal allow, dominating prefixed deny", acls: []acl{{lit(ResourceTopic, "tx"), allow("User:alice", OpWrite)}, {pre(ResourceTopic, "t"), deny("User:alice", OpWrite)}}, want: false},
		{name: "prefixed allow, longer prefixed deny", acls: []acl{{pre(ResourceTopic, "t"), allow("User:alice", OpWrite)}, {pre(ResourceTopic, "tx"), deny("User:alice", OpWrite)}}, want: true},
		{name: "wildcard literal deny", allowIfNone: true, acls: []acl{{lit(ResourceTopic, "*"), deny("User:alice", OpWrite)}}, want: false},
		{name: "wildcard literal allow, other deny", acls: []acl{{lit(ResourceTopic, "*"), allow("User:alice", OpWrite)}, {lit(ResourceTopic, "t"), deny("User:alice", OpWrite)}}, want: true},
		{name: "another principal's allow", acls: []acl{{lit(ResourceTopic, "t"), allow("User:bob", OpWrite)}}, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cacheOf(nil, tc.allowIfNone, tc.acls...)
			if got := c.AuthorizeByResourceType(alice, OpWrite, ResourceTopic); got != tc.want {
				t.Fatalf("AuthorizeByResourceType = %v, want %v", got, tc.want)
			}
		})
	}
}

func str(s string) *string { return &s }

func TestFilterMatchesPattern(t *testing.T) {
	for _, tc := range []struct {
		f    Filter
		p    Pattern
		want bool
	}{
		{Filter{Type: ResourceAny, PatternType: PatternAny}, lit(ResourceGroup, "g"), true},
		{Filter{Type: ResourceTopic, PatternType: PatternAny}, lit(ResourceGroup, "g"), false},
		{Filter{Type: ResourceTopic, Name: str("t"), PatternType: PatternLiteral}, lit(ResourceTopic, "t"), true},
		{Filter{Type: ResourceTopic, Name: str("t"), PatternType: PatternLiteral}, pre(ResourceTopic, "t"), false},
		{Filter{Type: ResourceTopic, Name: str("t"), PatternType: PatternLiteral}, lit(ResourceTopic, "*"), false},
		{Filter{Type: ResourceTopic, Name: str("t"), PatternType: PatternAny}, pre(ResourceTopic, "t"), true},
		{Filter{Type: ResourceTopic, Name: str("tx"), PatternType: PatternAny}, pre(ResourceTopic, "t"), false},
		{Filter{Type: ResourceTopic, Name: str("tx"), PatternType: PatternMatch}, pre(ResourceTopic, "t"), true},
		{Filter{Type: ResourceTopic, Name: str("tx"), PatternType: PatternMatch}, lit(ResourceTopic, "*"), true},
		{Filter{Type: ResourceTopic, Name: str("tx"), PatternType: PatternMatch}, lit(ResourceTopic, "tx"), true},
		{Filter{Type: ResourceTopic, Name: str("tx"), PatternType: PatternMatch}, lit(ResourceTopic, "t"), false},
		{Filter{Type: ResourceTopic, Name: str("t"), PatternType: PatternMatch}, pre(ResourceTopic, "tx"), false},
		{Filter{Type: ResourceTopic, PatternType: PatternPrefixed}, pre(ResourceTopic, "x"), true},
		{Filter{Type: ResourceTopic, PatternType: PatternPrefixed}, lit(ResourceTopic, "x"), false},
	} {
		if got := tc.f.MatchesPattern(tc.p); got != tc.want {
			t.Errorf("filter %+v name %v on %+v: %v, want %v", tc.f, tc.f.Name, tc.p, got, tc.want)
		}
	}
}

func TestFilterMatchesEntry(t *testing.T) {
	e := Entry{"User:alice", "127.0.0.1", OpRead, PermAllow}
	for _, tc := range []struct {
		f    Filter
		want bool
	}{
		{Filter{Operation: OpAny, Permission: PermAny}, true},
		{Filter{Principal: str("User:alice"), Operation: OpAny, Permission: PermAny}, true},
		{Filter{Principal: str("User:*"), Operation: OpAny, Permission: PermAny}, false},
		{Filter{Host: str("*"), Operation: OpAny, Permission: PermAny}, false},
		{Filter{Host: str("127.0.0.1"), Operation: OpRead, Permission: PermAllow}, true},
		{Filter{Operation: OpAll, Permission: PermAny}, false},
		{Filter{Operation: OpAny, Permission: PermDeny}, false},
	} {
		if got := tc.f.MatchesEntry(e); got != tc.want {
			t.Errorf("filter %+v on %+v: %v, want %v", tc.f, e, got, tc.want)
		}
	}
}

func TestExactPatterns(t *testing.T) {
	f := Filter{Type: ResourceTopic, Name: str("t"), PatternType: PatternAny}
	if got := f.ExactPatterns(); !slices.Equal(got, []Pattern{lit(ResourceTopic, "t"), pre(ResourceTopic, "t")}) {
		t.Fatalf("ANY: %v", got)
	}
	for _, f := range []Filter{
		{Type: ResourceTopic, Name: str("t"), PatternType: PatternMatch},
		{Type: ResourceAny, Name: str("t"), PatternType: PatternLiteral},
		{Type: ResourceTopic, PatternType: PatternLiteral},
	} {
		if got := f.ExactPatterns(); got != nil {
			t.Errorf("%+v: %v, want none", f, got)
		}
	}
}

func TestRemoveCreditsFirstFilter(t *testing.T) {
	p := lit(ResourceTopic, "t")
	a, b, c := allow("User:a", OpRead), allow("User:b", OpRead), deny("User:c", OpWrite)
	filters := []Filter{
		{Type: ResourceTopic, PatternType: PatternAny, Operation: OpRead, Permission: PermAny},
		{Type: ResourceAny, PatternType: PatternAny, Operation: OpAny, Permission: PermAny},
		{Type: ResourceGroup, PatternType: PatternAny, Operation: OpAny, Permission: PermAny},
	}
	keep, del := Remove(p, []Entry{a, b, c}, filters)
	if len(keep) != 0 || !slices.Equal(del[0], []Entry{a, b}) || !slices.Equal(del[1], []Entry{c}) || del[2] != nil {
		t.Fatalf("keep %v deleted %v", keep, del)
	}
}

func TestPatternsOrder(t *testing.T) {
	c := cacheOf(nil, false,
		acl{pre(ResourceTopic, "b"), allow("User:a", OpRead)}, acl{lit(ResourceGroup, "g"), allow("User:a", OpRead)},
		acl{lit(ResourceTopic, "a"), allow("User:a", OpRead)}, acl{lit(ResourceTopic, "b"), allow("User:a", OpRead)})
	want := []Pattern{lit(ResourceTopic, "b"), lit(ResourceTopic, "a"), pre(ResourceTopic, "b"), lit(ResourceGroup, "g")}
	if got := c.Patterns(); !slices.Equal(got, want) {
		t.Fatalf("Patterns() = %v, want %v", got, want)
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct{ s, want string }{
		{OpClusterAction.String(), "ClusterAction"}, {OpIdempotentWrite.String(), "IdempotentWrite"},
		{ResourceTransactionalID.String(), "TransactionalId"}, {ResourceTransactionalID.EnumName(), "TRANSACTIONAL_ID"},
		{PermAllow.String(), "Allow"}, {PatternPrefixed.String(), "PREFIXED"},
		{ParseOperation("CLUSTER_ACTION").String(), "ClusterAction"}, {ParseOperation("describeconfigs").String(), "DescribeConfigs"},
		{ParseResourceType("TRANSACTIONAL_ID").String(), "TransactionalId"}, {ParseResourceType("Topic").String(), "Topic"},
		{ParsePermission("deny").String(), "Deny"}, {ParseOperation("bogus").String(), "Unknown"},
	} {
		if tc.s != tc.want {
			t.Errorf("%q, want %q", tc.s, tc.want)
		}
	}
}

func TestAuthorizedOperations(t *testing.T) {
	c := cacheOf(nil, false, acl{lit(ResourceTopic, "t"), allow("User:alice", OpRead)})
	// READ (3) and DESCRIBE (8), implied by READ.
	if got := c.AuthorizedOperations(alice, ResourceTopic, "t"); got != 1<<3|1<<8 {
		t.Fatalf("AuthorizedOperations = %b", got)
	}
	var none *Cache
	if got := none.AuthorizedOperations(alice, ResourceGroup, "g"); got != 1<<3|1<<6|1<<8 {
		t.Fatalf("without an authorizer = %b", got)
	}
}
