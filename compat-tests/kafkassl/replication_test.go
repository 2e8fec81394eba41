package kafkassl

import (
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// TestReplicationOverSSL: three brokers whose inter-broker listener
// (inter.broker.listener.name=INTERNAL) is SSL with ssl.client.auth=
// required, clients on PLAINTEXT: followers fetch from leaders over TLS,
// presenting the keystore's certificate, and acks=all writes to an RF 3
// topic (which need both followers) succeed and read back.
func TestReplicationOverSSL(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	cl := kafkaenv.StartCluster(t, 3, kafkaenv.Configure(func(c *broker.Config) {
		c.Listeners = []string{"PLAINTEXT://127.0.0.1:0", "INTERNAL://127.0.0.1:0"}
		c.ListenerProtocols = map[string]string{"PLAINTEXT": "PLAINTEXT", "INTERNAL": "SSL"}
		c.InterBroker.ListenerName = "INTERNAL"
		c.SSL.KeystoreType, c.SSL.KeystoreLocation, c.SSL.KeystorePassword = "PKCS12", p.ServerP12, "changeit"
		c.SSL.TruststoreType, c.SSL.TruststoreLocation = "PEM", p.CAPEM
		c.SSL.ClientAuth = "required"
	}))
	c := cl.Brokers[0].Client(kgo.SeedBrokers(cl.Seeds()...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("tls-r3"))
	ctx := kafkaenv.Context(t, 30*time.Second)
	adm := kadm.NewClient(c)
	if r, err := adm.CreateTopic(ctx, 1, 3, nil, "tls-r3"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	for i := range 20 {
		if err := c.ProduceSync(ctx, kgo.StringRecord(strconv.Itoa(i))).FirstErr(); err != nil {
			t.Fatalf("acks=all produce %d: %v", i, err)
		}
	}
	td, err := adm.ListTopics(ctx, "tls-r3")
	if err != nil || len(td["tls-r3"].Partitions[0].ISR) != 3 {
		t.Fatalf("ISR after acks=all writes: %+v %v", td["tls-r3"].Partitions, err)
	}
}
