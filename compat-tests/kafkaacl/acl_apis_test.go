package kafkaacl

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestACLAPIsWithoutAuthorizer: with no authorizer.class.name the ACL
// APIs answer SECURITY_DISABLED with Kafka's messages.
func TestACLAPIsWithoutAuthorizer(t *testing.T) {
	e := plainBroker(t)
	c := e.Client()
	create := kmsg.NewPtrCreateACLsRequest()
	create.Creations = append(create.Creations, aclOf(topicT, "t", literal, "User:a", "*", kmsg.ACLOperationRead, allowP))
	cr, err := create.RequestWith(ctx(t), c)
	if err != nil || len(cr.Results) != 1 || cr.Results[0].ErrorCode != kerr.SecurityDisabled.Code ||
		cr.Results[0].ErrorMessage == nil || *cr.Results[0].ErrorMessage != "No Authorizer is configured." {
		t.Fatalf("CreateAcls: %v %+v", err, cr)
	}
	dr, err := anyFilter().RequestWith(ctx(t), c)
	if err != nil || dr.ErrorCode != kerr.SecurityDisabled.Code || dr.ErrorMessage == nil ||
		*dr.ErrorMessage != "No Authorizer is configured on the broker" {
		t.Fatalf("DescribeAcls: %v %+v", err, dr)
	}
	del := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = append(del.Filters, f)
	xr, err := del.RequestWith(ctx(t), c)
	if err != nil || len(xr.Results) != 1 || xr.Results[0].ErrorCode != kerr.SecurityDisabled.Code {
		t.Fatalf("DeleteAcls: %v %+v", err, xr)
	}
}

// describe lists the ACLs req matches as "Type:PATTERN:name principal
// host Op Perm" lines, in the response's order.
func describe(t *testing.T, e *kafkaenv.Env, p *pki, req *kmsg.DescribeACLsRequest) []string {
	t.Helper()
	resp, err := req.RequestWith(ctx(t), p.as(e, admin))
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("DescribeAcls: %v %+v", err, resp)
	}
	var out []string
	for _, r := range resp.Resources {
		for _, a := range r.ACLs {
			out = append(out, fmt.Sprintf("%s:%s:%s %s %s %s %s", r.ResourceType, r.ResourcePatternType, r.ResourceName,
				a.Principal, a.Host, a.Operation, a.PermissionType))
		}
	}
	return out
}

// TestCreateDescribeDeleteACLs: the three APIs with literal, prefixed
// and wildcard patterns, MATCH and ANY filters, Kafka's errors for bad
// creations, and the znodes written in Kafka's JSON.
func TestCreateDescribeDeleteACLs(t *testing.T) {
	p := newPKI(t)
	e := kafkaenv.Start(t, p.secured())
	ac := p.as(e, admin)
	req := kmsg.NewPtrCreateACLsRequest()
	req.Creations = []kmsg.CreateACLsRequestCreation{
		aclOf(topicT, "fin-ledger", literal, alice, "*", kmsg.ACLOperationRead, allowP),
		aclOf(topicT, "fin-", prefixed, alice, "*", kmsg.ACLOperationWrite, allowP),
		aclOf(topicT, "*", literal, bob, "*", kmsg.ACLOperationDescribe, allowP),
		aclOf(groupT, "g-alice", literal, alice, "*", kmsg.ACLOperationRead, allowP),
		aclOf(clusterT, "kafka-cluster", literal, bob, "127.0.0.1", kmsg.ACLOperationAlter, denyP),
		aclOf(clusterT, "other", literal, bob, "*", kmsg.ACLOperationAlter, allowP),
		aclOf(topicT, "", literal, bob, "*", kmsg.ACLOperationRead, allowP),
		aclOf(topicT, "a/b", literal, bob, "*", kmsg.ACLOperationRead, allowP),
		aclOf(topicT, "nobody", literal, "alice", "*", kmsg.ACLOperationRead, allowP),
	}
	resp, err := req.RequestWith(ctx(t), ac)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range resp.Results {
		msg := "<nil>"
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		got = append(got, fmt.Sprintf("%d %s", r.ErrorCode, msg))
	}
	want := []string{"0 <nil>", "0 <nil>", "0 <nil>", "0 <nil>", "0 <nil>",
		"42 The only valid name for the CLUSTER resource is kafka-cluster", "42 Invalid empty resource name",
		"42 Failed to create ACL", "-1 <nil>"}
	if !slices.Equal(got, want) {
		t.Fatalf("CreateAcls results:\n got %q\nwant %q", got, want)
	}

	// The znodes, as Kafka's AclAuthorizer writes them.
	zc := e.ZK()
	for path, want := range map[string]string{
		"/kafka-acl/Topic/fin-ledger":             `{"version":1,"acls":[{"principal":"User:CN=alice,O=zkafka","permissionType":"Allow","operation":"Read","host":"*"}]}`,
		"/kafka-acl-extended/prefixed/Topic/fin-": `{"version":1,"acls":[{"principal":"User:CN=alice,O=zkafka","permissionType":"Allow","operation":"Write","host":"*"}]}`,
		"/kafka-acl/Topic/*":                      `{"version":1,"acls":[{"principal":"User:CN=bob,O=zkafka","permissionType":"Allow","operation":"Describe","host":"*"}]}`,
		"/kafka-acl/Cluster/kafka-cluster":        `{"version":1,"acls":[{"principal":"User:CN=bob,O=zkafka","permissionType":"Deny","operation":"Alter","host":"127.0.0.1"}]}`,
		"/kafka-acl/Group/g-alice":                `{"version":1,"acls":[{"principal":"User:CN=alice,O=zkafka","permissionType":"Allow","operation":"Read","host":"*"}]}`,
		"/kafka-acl/DelegationToken":              "",
		"/kafka-acl-extended/prefixed/User":       "",
		"/kafka-acl/TransactionalId":              "",
	} {
		data, _, err := zc.Get(e.Path(path))
		if err != nil || string(data) != want {
			t.Errorf("%s = %q, %v; want %q", path, data, err, want)
		}
	}
	notes := func(path string) []string {
		kids, _, err := zc.Children(e.Path(path))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range kids {
			if !strings.HasPrefix(k, "acl_changes_") || len(k) != len("acl_changes_")+10 {
				t.Errorf("%s/%s: not a sequential acl_changes_ node", path, k)
			}
			data, _, _ := zc.Get(e.Path(path + "/" + k))
			out = append(out, string(data))
		}
		sort.Strings(out)
		return out
	}
	if got, want := notes("/kafka-acl-changes"), []string{"CLUSTER:kafka-cluster", "GROUP:g-alice", "TOPIC:*", "TOPIC:fin-ledger"}; !slices.Equal(got, want) {
		t.Errorf("literal change notifications %q, want %q", got, want)
	}
	if got, want := notes("/kafka-acl-extended-changes"), []string{`{"version":1,"resourceType":"TOPIC","name":"fin-","patternType":"PREFIXED"}`}; !slices.Equal(got, want) {
		t.Errorf("extended change notifications %q, want %q", got, want)
	}

	// An ACL that exists already: success, and nothing is written.
	createACLs(t, ac, aclOf(topicT, "fin-ledger", literal, alice, "*", kmsg.ACLOperationRead, allowP))
	if _, st, _ := zc.Get(e.Path("/kafka-acl/Topic/fin-ledger")); st.Version != 0 {
		t.Errorf("re-creating an ACL wrote its znode (version %d)", st.Version)
	}
	createACLs(t, ac, aclOf(topicT, "fin-ledger", literal, bob, "*", kmsg.ACLOperationWrite, denyP))
	if data, st, _ := zc.Get(e.Path("/kafka-acl/Topic/fin-ledger")); st.Version != 1 || !strings.Contains(string(data), `"permissionType":"Deny","operation":"Write"`) {
		t.Errorf("second ACL of a pattern: version %d, %s", st.Version, data)
	}

	all := describe(t, e, p, anyFilter())
	wantAll := []string{
		"TOPIC:LITERAL:fin-ledger User:CN=alice,O=zkafka * READ ALLOW",
		"TOPIC:LITERAL:fin-ledger User:CN=bob,O=zkafka * WRITE DENY",
		"TOPIC:LITERAL:* User:CN=bob,O=zkafka * DESCRIBE ALLOW",
		"TOPIC:PREFIXED:fin- User:CN=alice,O=zkafka * WRITE ALLOW",
		"GROUP:LITERAL:g-alice User:CN=alice,O=zkafka * READ ALLOW",
		"CLUSTER:LITERAL:kafka-cluster User:CN=bob,O=zkafka 127.0.0.1 ALTER DENY",
	}
	if !slices.Equal(all, wantAll) {
		t.Fatalf("DescribeAcls ANY:\n got %q\nwant %q", all, wantAll)
	}
	match := anyFilter()
	match.ResourceType, match.ResourceName, match.ResourcePatternType = topicT, kmsg.StringPtr("fin-ledger"), kmsg.ACLResourcePatternTypeMatch
	if got := describe(t, e, p, match); len(got) != 4 || got[3] != wantAll[3] {
		t.Errorf("MATCH fin-ledger: %q", got)
	}
	lit := anyFilter()
	lit.ResourceType, lit.ResourceName, lit.ResourcePatternType = topicT, kmsg.StringPtr("fin-"), literal
	if got := describe(t, e, p, lit); len(got) != 0 {
		t.Errorf("LITERAL fin-: %q, want none (the fin- pattern is PREFIXED)", got)
	}
	byBob := anyFilter()
	byBob.Principal = kmsg.StringPtr(bob)
	if got := describe(t, e, p, byBob); !slices.Equal(got, []string{wantAll[1], wantAll[2], wantAll[5]}) {
		t.Errorf("principal bob: %q", got)
	}
	wild := anyFilter()
	wild.Principal = kmsg.StringPtr("User:*")
	if got := describe(t, e, p, wild); len(got) != 0 {
		t.Errorf("principal User:* matches %q; a filter compares principals as strings", got)
	}

	// Not a super user: DESCRIBE / ALTER on the cluster are needed.
	ar, err := anyFilter().RequestWith(ctx(t), p.as(e, alice))
	if err != nil || ar.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice DescribeAcls: %v %+v", err, ar)
	}
	aliceCreate := kmsg.NewPtrCreateACLsRequest()
	aliceCreate.Creations = append(aliceCreate.Creations, aclOf(topicT, "x", literal, alice, "*", kmsg.ACLOperationAll, allowP))
	if r, err := aliceCreate.RequestWith(ctx(t), p.as(e, alice)); err != nil || r.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice CreateAcls: %v %+v", err, r)
	}

	// DeleteAcls: each ACL is credited to the first filter matching it.
	del := kmsg.NewPtrDeleteACLsRequest()
	f0 := kmsg.NewDeleteACLsRequestFilter()
	f0.ResourceType, f0.ResourceName, f0.ResourcePatternType = topicT, kmsg.StringPtr("fin-ledger"), kmsg.ACLResourcePatternTypeAny
	f0.Operation, f0.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	f1 := kmsg.NewDeleteACLsRequestFilter()
	f1.ResourceType, f1.ResourcePatternType, f1.Principal = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, kmsg.StringPtr(alice)
	f1.Operation, f1.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = []kmsg.DeleteACLsRequestFilter{f0, f1}
	dr, err := del.RequestWith(ctx(t), ac)
	if err != nil || len(dr.Results) != 2 {
		t.Fatalf("DeleteAcls: %v %+v", err, dr)
	}
	var deleted [2][]string
	for i, r := range dr.Results {
		for _, m := range r.MatchingACLs {
			deleted[i] = append(deleted[i], fmt.Sprintf("%s:%s:%s %s %s %s %s", m.ResourceType, m.ResourcePatternType, m.ResourceName,
				m.Principal, m.Host, m.Operation, m.PermissionType))
		}
	}
	if !slices.Equal(deleted[0], wantAll[:2]) || !slices.Equal(deleted[1], []string{wantAll[3], wantAll[4]}) {
		t.Fatalf("DeleteAcls matched %q", deleted)
	}
	for _, gone := range []string{"/kafka-acl/Topic/fin-ledger", "/kafka-acl-extended/prefixed/Topic/fin-", "/kafka-acl/Group/g-alice"} {
		if ok, _, _ := zc.Exists(e.Path(gone)); ok {
			t.Errorf("%s still exists after its last ACL was deleted", gone)
		}
	}
	if got := describe(t, e, p, anyFilter()); !slices.Equal(got, []string{wantAll[2], wantAll[5]}) {
		t.Errorf("after DeleteAcls: %q", got)
	}

	// A code Kafka does not know fails the request's parse: the
	// connection is closed.
	bad := anyFilter()
	bad.ResourceType = 0
	if _, err := bad.RequestWith(ctx(t), p.as(e, admin)); err == nil {
		t.Error("DescribeAcls with resource type UNKNOWN was answered")
	}
}

// TestACLChangeAppliesOnOtherBroker: an ACL created or deleted through
// one broker applies on the other once its change notification is read.
func TestACLChangeAppliesOnOtherBroker(t *testing.T) {
	p := newPKI(t)
	cl := kafkaenv.StartCluster(t, 2, p.secured())
	b1, b2 := cl.Broker(1), cl.Broker(2)
	if _, err := p.admin(b1, admin).CreateTopic(ctx(t), 1, 1, nil, "shared"); err != nil {
		t.Fatal(err)
	}
	aliceOn := func(id int32) int16 {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("shared")
		req.Topics = append(req.Topics, rt)
		resp := on[*kmsg.MetadataResponse](t, p.as(b1, alice), id, req)
		return resp.Topics[0].ErrorCode
	}
	if code := aliceOn(2); code != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("alice sees shared on broker 2 before any ACL: code %d", code)
	}
	createACLs(t, p.as(b1, admin), aclOf(topicT, "sha", prefixed, alice, "*", kmsg.ACLOperationDescribe, allowP))
	waitFor(t, "a prefixed ACL created through broker 1 applies on broker 2", func() bool { return aliceOn(2) == 0 })

	del := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType = topicT, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = append(del.Filters, f)
	dr := on[*kmsg.DeleteACLsResponse](t, p.as(b2, admin), 2, del)
	if len(dr.Results) != 1 || len(dr.Results[0].MatchingACLs) != 1 {
		t.Fatalf("DeleteAcls on broker 2: %+v", dr)
	}
	waitFor(t, "a deletion through broker 2 applies on broker 1", func() bool { return aliceOn(1) == kerr.TopicAuthorizationFailed.Code })

	createACLs(t, p.as(b2, admin), aclOf(topicT, "shared", literal, alice, "*", kmsg.ACLOperationRead, allowP))
	waitFor(t, "a literal ACL created through broker 2 applies on broker 1", func() bool { return aliceOn(1) == 0 })
}

// TestKadmACLs: kadm's builder (CreateACLs, DescribeACLs, DeleteACLs) as
// an application uses it: prefixed READ and DESCRIBE for alice on two
// names, one deny for bob, listed by MATCH and deleted by principal.
func TestKadmACLs(t *testing.T) {
	p := newPKI(t)
	e := kafkaenv.Start(t, p.secured())
	adm := p.admin(e, admin)
	created, err := adm.CreateACLs(ctx(t), kadm.NewACLs().Allow(alice).Topics("orders-", "billing-").
		ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead, kadm.OpDescribe))
	if err != nil || len(created) != 4 {
		t.Fatalf("CreateACLs: %v %+v", err, created)
	}
	for _, c := range created {
		if c.Err != nil {
			t.Fatalf("CreateACLs %s %s: %v", c.Name, c.Operation, c.Err)
		}
	}
	if _, err := adm.CreateACLs(ctx(t), kadm.NewACLs().Deny(bob).Groups("orders-app").Operations(kadm.OpRead)); err != nil {
		t.Fatal(err)
	}
	described, err := adm.DescribeACLs(ctx(t), kadm.NewACLs().Topics("orders-eu").ResourcePatternType(kadm.ACLPatternMatch).
		Operations(kadm.OpAny).Allow().AllowHosts().Deny().DenyHosts())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range described {
		if r.Err != nil {
			t.Fatalf("DescribeACLs: %v", r.Err)
		}
		for _, d := range r.Described {
			got = append(got, fmt.Sprintf("%s %s %s %s", d.Name, d.Pattern, d.Principal, d.Operation))
		}
	}
	sort.Strings(got)
	if want := []string{"orders- PREFIXED " + alice + " DESCRIBE", "orders- PREFIXED " + alice + " READ"}; !slices.Equal(got, want) {
		t.Fatalf("DescribeACLs MATCH orders-eu: %q, want %q", got, want)
	}
	deleted, err := adm.DeleteACLs(ctx(t), kadm.NewACLs().Allow(alice).AllowHosts().AnyResource().ResourcePatternType(kadm.ACLPatternAny).
		Operations(kadm.OpAny))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range deleted {
		if r.Err != nil {
			t.Fatalf("DeleteACLs: %v", r.Err)
		}
		n += len(r.Deleted)
	}
	if n != 4 {
		t.Fatalf("DeleteACLs by principal removed %d ACLs, want 4: %+v", n, deleted)
	}
	if left := describe(t, e, p, anyFilter()); !slices.Equal(left, []string{"GROUP:LITERAL:orders-app " + bob + " * READ DENY"}) {
		t.Fatalf("after DeleteACLs: %q", left)
	}
}
