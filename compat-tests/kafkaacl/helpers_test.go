package kafkaacl

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// on sends req to the broker with id over c (the cluster's brokers are
// learned first), failing t on a transport error.
func on[R kmsg.Response](t *testing.T, c *kgo.Client, id int32, req kmsg.Request) R {
	t.Helper()
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx(t), c); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	resp, err := c.Broker(int(id)).Request(ctx(t), req)
	if err != nil {
		t.Fatalf("%T to broker %d: %v", req, id, err)
	}
	return resp.(R)
}

// aclOf is one CreateAcls creation.
func aclOf(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal, host string,
	op kmsg.ACLOperation, perm kmsg.ACLPermissionType) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pt
	c.Principal, c.Host, c.Operation, c.PermissionType = principal, host, op, perm
	return c
}

const (
	topicT   = kmsg.ACLResourceTypeTopic
	groupT   = kmsg.ACLResourceTypeGroup
	clusterT = kmsg.ACLResourceTypeCluster
	literal  = kmsg.ACLResourcePatternTypeLiteral
	prefixed = kmsg.ACLResourcePatternTypePrefixed
	allowP   = kmsg.ACLPermissionTypeAllow
	denyP    = kmsg.ACLPermissionTypeDeny
)

// createACLs creates acls through c and fails t unless every one
// succeeded.
func createACLs(t testing.TB, c *kgo.Client, acls ...kmsg.CreateACLsRequestCreation) {
	t.Helper()
	req := kmsg.NewPtrCreateACLsRequest()
	req.Creations = acls
	resp, err := req.RequestWith(ctx(t), c)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range resp.Results {
		if r.ErrorCode != 0 {
			t.Fatalf("creation %d (%+v): error %d %v", i, acls[i], r.ErrorCode, r.ErrorMessage)
		}
	}
}

// anyFilter is a DescribeAcls request matching every ACL.
func anyFilter() *kmsg.DescribeACLsRequest {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	return req
}

// plainBroker is a broker without an authorizer.
func plainBroker(t *testing.T) *kafkaenv.Env {
	return kafkaenv.Start(t, kafkaenv.Configure(func(c *broker.Config) {}))
}
