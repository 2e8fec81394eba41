package kafkaacl

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// metadataOf is the code of topic in a Metadata request through c, or
// the transport error.
func metadataOf(t *testing.T, c *kgo.Client, topic string) (int16, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), c)
	if err != nil {
		return 0, err
	}
	return resp.Topics[0].ErrorCode, nil
}

// TestPrincipalMappingRules: ssl.principal.mapping.rules turns the
// certificates' DNs into the principals the ACLs and super.users name,
// as Kafka's SslPrincipalMapper; a certificate no rule maps is refused
// its connection.
func TestPrincipalMappingRules(t *testing.T) {
	p := newPKI(t)
	e := kafkaenv.Start(t, p.secured(func(c *broker.Config) {
		c.Authz.PrincipalMappingRules = "RULE:^CN=(.*?),O=zkafka$/$1/L, DEFAULT"
		c.Authz.SuperUsers = []string{"User:admin", brokerP}
	}))
	if _, err := p.admin(e, admin).CreateTopic(ctx(t), 1, 1, nil, "mapped"); err != nil {
		t.Fatalf("admin (User:admin after mapping): %v", err)
	}
	createACLs(t, p.as(e, admin), aclOf(topicT, "mapped", literal, "User:alice", "*", kmsg.ACLOperationDescribe, allowP))
	if code, err := metadataOf(t, p.as(e, alice), "mapped"); err != nil || code != 0 {
		t.Fatalf("alice (User:alice) describing mapped: %d %v", code, err)
	}
	if code, err := metadataOf(t, p.as(e, bob), "mapped"); err != nil || code != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("bob describing mapped: %d %v", code, err)
	}

	strict := kafkaenv.Start(t, p.secured(func(c *broker.Config) {
		c.Authz.PrincipalMappingRules = "RULE:^CN=(admin|localhost)(,.*)?$/$1/"
		c.Authz.SuperUsers = []string{"User:admin", "User:localhost"}
	}))
	// The brokers' own requests (UpdateMetadata, as User:localhost) pass:
	// Metadata lists the broker once the controller's request arrived.
	waitFor(t, "the strict broker's metadata", func() bool {
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx(t), p.as(strict, admin, kgo.RequestRetries(0)))
		return err == nil && len(resp.Brokers) == 1
	})
	if code, err := metadataOf(t, p.as(strict, alice, kgo.RequestRetries(0)), "x"); err == nil {
		t.Fatalf("alice, whom no rule maps, was answered (code %d)", code)
	}
	waitFor(t, "the refusal logged", func() bool {
		return strict.Logs.Count("WARN closing connection: its certificate has no principal") > 0
	})
}
