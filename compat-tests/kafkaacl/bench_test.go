package kafkaacl

import (
	"strconv"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// BenchmarkProduceAuthorized: one produce request (acks=1, one 100-byte
// record, so that the request path and not the log dominates) from alice
// over the SSL listener, without an authorizer and with one holding 2,000
// ACLs (loaded at start), alice allowed by a prefixed ACL. The difference is the cost of the
// check (principal from the certificate, the cache lookups).
func BenchmarkProduceAuthorized(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "authorizer-off"
		if on {
			name = "authorizer-on"
		}
		b.Run(name, func(b *testing.B) {
			p := newPKI(b)
			opt := p.secured()
			if !on {
				opt = p.secured(func(c *broker.Config) { c.Authz = broker.AuthzConfig{} })
			}
			e := kafkaenv.Start(b, opt)
			if _, err := p.admin(e, admin).CreateTopic(ctx(b), 1, 1, nil, "bench-topic"); err != nil {
				b.Fatal(err)
			}
			if on {
				// 2,000 other ACLs written straight into ZooKeeper while the
				// broker is down: it loads them at start, with no change
				// notifications to catch up on while the benchmark runs.
				e.Stop()
				zc := e.ZK()
				for i := range 2000 {
					data := `{"version":1,"acls":[{"principal":"User:CN=bob,O=zkafka","permissionType":"Allow","operation":"Read","host":"*"}]}`
					if _, err := zc.Create(e.Path("/kafka-acl/Topic/t-"+strconv.Itoa(i)), []byte(data), 0, zk.WorldACL(zk.PermAll)); err != nil {
						b.Fatal(err)
					}
				}
				data := `{"version":1,"acls":[{"principal":"User:CN=alice,O=zkafka","permissionType":"Allow","operation":"Write","host":"*"}]}`
				if _, err := zc.Create(e.Path("/kafka-acl-extended/prefixed/Topic/bench-"), []byte(data), 0, zk.WorldACL(zk.PermAll)); err != nil {
					b.Fatal(err)
				}
				e.Start()
			}
			c := p.as(e, alice, kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.LeaderAck()))
			rec := &kgo.Record{Topic: "bench-topic", Value: make([]byte, 100)}
			if err := c.ProduceSync(ctx(b), rec).FirstErr(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if err := c.ProduceSync(ctx(b), &kgo.Record{Topic: "bench-topic", Value: rec.Value}).FirstErr(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
