package kafkaacl

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestACLWritesCompareAndSet: an ACL znode changed behind the broker's
// back (another broker's write whose notification it has not read yet)
// makes its versioned write fail; it re-reads the znode and writes the
// union, so neither ACL is lost — AclAuthorizer.updateResourceAcls.
// A DeleteAcls filter naming the pattern exactly deletes an ACL that is
// in ZooKeeper but not yet in the broker's cache.
func TestACLWritesCompareAndSet(t *testing.T) {
	p := newPKI(t)
	e := kafkaenv.Start(t, p.secured())
	ac := p.as(e, admin)
	createACLs(t, ac, aclOf(topicT, "cas", literal, alice, "*", kmsg.ACLOperationRead, allowP))
	zc := e.ZK()
	path := e.Path("/kafka-acl/Topic/cas")
	behind := `{"version":1,"acls":[{"principal":"User:CN=alice,O=zkafka","permissionType":"Allow","operation":"Read","host":"*"},` +
		`{"principal":"User:carol","permissionType":"Allow","operation":"Write","host":"*"}]}`
	if _, err := zc.Set(path, []byte(behind), 0); err != nil {
		t.Fatal(err)
	}
	createACLs(t, ac, aclOf(topicT, "cas", literal, bob, "*", kmsg.ACLOperationRead, allowP))
	data, st, err := zc.Get(path)
	if err != nil || st.Version != 2 || !strings.Contains(string(data), "User:carol") || !strings.Contains(string(data), "CN=bob") {
		t.Fatalf("after a write behind the broker's back: version %d, %s, %v", st.Version, data, err)
	}

	// A pattern only ZooKeeper has (no notification was written).
	if _, err := zc.Create(e.Path("/kafka-acl/Group/hidden"), []byte(`{"version":1,"acls":[{"principal":"User:dave","permissionType":"Allow","operation":"Read","host":"*"}]}`),
		0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	del := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourceName, f.ResourcePatternType = groupT, kmsg.StringPtr("hidden"), literal
	f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = append(del.Filters, f)
	dr, err := del.RequestWith(ctx(t), ac)
	if err != nil || len(dr.Results[0].MatchingACLs) != 1 || dr.Results[0].MatchingACLs[0].Principal != "User:dave" {
		t.Fatalf("DeleteAcls of a pattern not yet cached: %v %+v", err, dr)
	}
	if ok, _, _ := zc.Exists(e.Path("/kafka-acl/Group/hidden")); ok {
		t.Fatal("/kafka-acl/Group/hidden survived its deletion")
	}
}

// TestACLsLoadedAtStart: a restarted broker loads the ACLs from
// ZooKeeper (and ignores a malformed change notification).
func TestACLsLoadedAtStart(t *testing.T) {
	p := newPKI(t)
	e := kafkaenv.Start(t, p.secured())
	if _, err := p.admin(e, admin).CreateTopic(ctx(t), 1, 1, nil, "kept"); err != nil {
		t.Fatal(err)
	}
	createACLs(t, p.as(e, admin), aclOf(topicT, "kept", literal, alice, "*", kmsg.ACLOperationDescribe, allowP))
	if _, err := e.ZK().Create(e.Path("/kafka-acl-changes/acl_changes_"), []byte("garbage"), zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	e.Restart()
	req := kmsg.NewPtrMetadataRequest()
	for _, name := range []string{"kept", "not-kept"} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	// The restarted broker's Metadata lists "kept" once the controller's
	// UpdateMetadata has come, in its own time after the registration.
	c := p.as(e, alice)
	var resp *kmsg.MetadataResponse
	var err error
	waitFor(t, "the restarted broker's Metadata lists kept", func() bool {
		resp, err = req.RequestWith(ctx(t), c)
		return err == nil && resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code
	})
	if resp.Topics[0].ErrorCode != 0 || resp.Topics[1].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("after a restart: %+v", resp.Topics)
	}
	waitFor(t, "the malformed notification reported", func() bool {
		return e.Logs.Count("WARN ignoring an ACL change notification") > 0
	})
}

// TestTopicAuthorizedOperations: Metadata's topic and cluster authorized
// operations are the bit fields of what the principal may do.
func TestTopicAuthorizedOperations(t *testing.T) {
	p := newPKI(t)
	e := kafkaenv.Start(t, p.secured())
	if _, err := p.admin(e, admin).CreateTopic(ctx(t), 1, 1, nil, "ops"); err != nil {
		t.Fatal(err)
	}
	createACLs(t, p.as(e, admin), aclOf(topicT, "ops", literal, alice, "*", kmsg.ACLOperationRead, allowP),
		aclOf(topicT, "ops", literal, alice, "*", kmsg.ACLOperationAlterConfigs, allowP))
	req := kmsg.NewPtrMetadataRequest()
	req.IncludeTopicAuthorizedOperations = true
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("ops")
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), p.as(e, alice))
	// READ (3), DESCRIBE (8, implied), DESCRIBE_CONFIGS (10, implied), ALTER_CONFIGS (11).
	if want := int32(1<<3 | 1<<8 | 1<<10 | 1<<11); err != nil || resp.Topics[0].AuthorizedOperations != want {
		t.Fatalf("alice's operations on ops: %v %b, want %b", err, resp.Topics[0].AuthorizedOperations, want)
	}
}

// TestAllowEveryoneIfNoACL: with allow.everyone.if.no.acl.found=true a
// topic no ACL applies to is open to anyone; one with an ACL follows it.
func TestAllowEveryoneIfNoACL(t *testing.T) {
	p := newPKI(t)
	e := kafkaenv.Start(t, p.secured(func(c *broker.Config) { c.Authz.AllowEveryoneIfNoACL = true }))
	adm := p.admin(e, admin)
	for _, topic := range []string{"open", "guarded"} {
		if _, err := adm.CreateTopic(ctx(t), 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	createACLs(t, p.as(e, admin), aclOf(topicT, "guarded", literal, alice, "*", kmsg.ACLOperationWrite, allowP))
	c := p.as(e, anon, kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))
	if err := c.ProduceSync(ctx(t), &kgo.Record{Topic: "open", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("anonymous produce to a topic without ACLs: %v", err)
	}
	if err := c.ProduceSync(ctx(t), &kgo.Record{Topic: "guarded", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("anonymous produce to a topic with an ACL for alice: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
}
