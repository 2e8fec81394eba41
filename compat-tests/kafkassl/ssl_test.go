package kafkassl

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

func TestMain(m *testing.M) { kafkaenv.Main(m) }

// sslBroker starts a broker whose listeners are given, the SSL ones with
// the PKCS12 keystore of p (or its PEM keystore) and clientAuth.
func sslBroker(t *testing.T, p *keystoretest.BrokerFiles, listeners []string, keystoreType, clientAuth string) *kafkaenv.Env {
	return kafkaenv.Start(t, kafkaenv.Configure(func(c *broker.Config) {
		c.Listeners = listeners
		c.SSL.KeystoreType, c.SSL.KeystoreLocation = keystoreType, p.ServerP12
		if keystoreType == "PEM" {
			c.SSL.KeystoreLocation = p.ServerPEM
		}
		c.SSL.KeystorePassword = "changeit"
		c.SSL.TruststoreType, c.SSL.TruststoreLocation = "PEM", p.CAPEM
		c.SSL.ClientAuth = clientAuth
	}))
}

// tlsClient is a kgo client of addr over TLS trusting p's CA, with the
// client certificate when withCert.
func tlsClient(e *kafkaenv.Env, p *keystoretest.BrokerFiles, addr string, withCert bool, opts ...kgo.Opt) *kgo.Client {
	cfg := &tls.Config{RootCAs: p.CAPool, MinVersion: tls.VersionTLS12}
	if withCert {
		cfg.Certificates = []tls.Certificate{p.ClientCert}
	}
	return e.Client(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DialTLSConfig(cfg)}, opts...)...)
}

// produceConsume produces n records of size bytes to a new topic through
// c and reads them back in order, failing t on any difference.
func produceConsume(t *testing.T, c *kgo.Client, topic string, n, size int) {
	t.Helper()
	ctx := kafkaenv.Context(t, 30*time.Second)
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: topic, Value: bytes.Repeat([]byte{byte('a' + i%26)}, size), Key: []byte(strconv.Itoa(i))})
	}
	if err := c.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce over TLS: %v", err)
	}
	c.AddConsumeTopics(topic)
	got := 0
	for got < n {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("fetch over TLS after %d records: %v", got, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Key) != strconv.Itoa(got) || !bytes.Equal(r.Value, recs[got].Value) {
				t.Fatalf("record %d: key %q, %d bytes; want key %d", got, r.Key, len(r.Value), got)
			}
			got++
		})
	}
}

// TestSSLProduceConsume: franz-go over an SSL listener (PKCS12 keystore)
// produces and reads back records larger than the copy buffer in all, so
// fetch responses go through the TLS copy path, not sendfile.
func TestSSLProduceConsume(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	e := sslBroker(t, p, []string{"SSL://127.0.0.1:0"}, "PKCS12", "none")
	c := tlsClient(e, p, e.Addr, false, kgo.AllowAutoTopicCreation(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	produceConsume(t, c, "ssl-topic", 300, 1000)
}

// TestSSLPEMKeystore: the same with a PEM keystore (key and chain in one
// file).
func TestSSLPEMKeystore(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	e := sslBroker(t, p, []string{"SSL://127.0.0.1:0"}, "PEM", "none")
	c := tlsClient(e, p, e.Addr, false, kgo.AllowAutoTopicCreation(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	produceConsume(t, c, "pem-topic", 20, 100)
}

// TestSSLClientAuthRequired: with ssl.client.auth=required a client
// without a certificate fails the handshake; one with a certificate signed
// by the truststore's CA is served.
func TestSSLClientAuthRequired(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	e := sslBroker(t, p, []string{"SSL://127.0.0.1:0"}, "PKCS12", "required")

	conn, err := tls.Dial("tcp", e.Addr, &tls.Config{RootCAs: p.CAPool})
	if err == nil {
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		// TLS 1.3: the server's refusal arrives on the first read.
		_, err = conn.Read(make([]byte, 1))
		conn.Close()
	}
	if err == nil {
		t.Fatal("a client without a certificate was served")
	}
	noCert := tlsClient(e, p, e.Addr, false, kgo.RequestRetries(0))
	if err := noCert.Ping(kafkaenv.Context(t, 10*time.Second)); err == nil {
		t.Fatal("kgo without a client certificate: Ping succeeded")
	}
	withCert := tlsClient(e, p, e.Addr, true, kgo.AllowAutoTopicCreation(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	produceConsume(t, withCert, "mtls-topic", 10, 100)
}

// TestPlaintextAndSSLOneBroker: one broker serves PLAINTEXT and SSL (a
// custom name mapped by listener.security.protocol.map); Metadata gives
// each client the port of the listener it came on, and /brokers/ids lists
// both listeners as Kafka writes them.
func TestPlaintextAndSSLOneBroker(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	e := kafkaenv.Start(t, kafkaenv.Configure(func(c *broker.Config) {
		c.Listeners = []string{"PLAINTEXT://127.0.0.1:0", "SECURE://127.0.0.1:0"}
		c.ListenerProtocols = map[string]string{"PLAINTEXT": "PLAINTEXT", "SECURE": "SSL"}
		c.SSL.KeystoreType, c.SSL.KeystoreLocation, c.SSL.KeystorePassword = "PKCS12", p.ServerP12, "changeit"
	}))
	plain := e.Client(kgo.AllowAutoTopicCreation(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	secure := tlsClient(e, p, e.Addrs[1], false, kgo.AllowAutoTopicCreation(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for i, c := range []*kgo.Client{plain, secure} {
		if port := metadataPort(t, c); strconv.Itoa(int(port)) != portOf(e.Addrs[i]) {
			t.Errorf("client of listener %d: Metadata gives port %d, want %s", i, port, portOf(e.Addrs[i]))
		}
	}
	produceConsume(t, plain, "plain-topic", 20, 100)
	produceConsume(t, secure, "secure-topic", 20, 100)

	data, _, err := e.ZK().Get(e.Path("/brokers/ids/0"))
	if err != nil {
		t.Fatal(err)
	}
	var z struct {
		Endpoints []string          `json:"endpoints"`
		Map       map[string]string `json:"listener_security_protocol_map"`
		Host      string            `json:"host"`
		Port      int               `json:"port"`
	}
	if err := json.Unmarshal(data, &z); err != nil {
		t.Fatal(err)
	}
	want := []string{"PLAINTEXT://" + e.Addrs[0], "SECURE://" + e.Addrs[1]}
	if fmt.Sprint(z.Endpoints) != fmt.Sprint(want) || z.Map["SECURE"] != "SSL" || z.Map["PLAINTEXT"] != "PLAINTEXT" ||
		strconv.Itoa(z.Port) != portOf(e.Addrs[0]) {
		t.Fatalf("/brokers/ids/0 = %s; want endpoints %v and both protocols", data, want)
	}
}

// metadataPort is the port Metadata gives for broker 0.
func metadataPort(t *testing.T, c *kgo.Client) int32 {
	t.Helper()
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(kafkaenv.Context(t, 10*time.Second), c)
	if err != nil || len(resp.Brokers) != 1 {
		t.Fatalf("Metadata: %v %+v", err, resp)
	}
	return resp.Brokers[0].Port
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
