package kafkasasl

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/xdg-go/scram"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/internal/jaas"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// interBrokerSCRAM configures a broker whose inter-broker listener
// INTERNAL is SASL_SSL with SCRAM-SHA-512, logging in as admin with pass
// (the ScramLoginModule's username= and password=), with the ACL
// authorizer on and admin the only super user; a PLAINTEXT listener (an
// anonymous principal, allowed nothing) comes first for the harness.
func interBrokerSCRAM(t *testing.T, p *keystoretest.BrokerFiles, pass string) kafkaenv.Option {
	mods, err := jaas.ParseEntries(`org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="` + pass + `";`)
	if err != nil {
		t.Fatal(err)
	}
	return kafkaenv.Configure(func(c *broker.Config) {
		c.Listeners = []string{"PLAINTEXT://127.0.0.1:0", "INTERNAL://127.0.0.1:0"}
		c.ListenerProtocols = map[string]string{"PLAINTEXT": "PLAINTEXT", "INTERNAL": "SASL_SSL"}
		c.InterBroker.ListenerName = "INTERNAL"
		c.InterBroker.SASLMechanism = "SCRAM-SHA-512"
		c.SSL.KeystoreType, c.SSL.KeystoreLocation, c.SSL.KeystorePassword = "PKCS12", p.ServerP12, "changeit"
		c.SSL.TruststoreType, c.SSL.TruststoreLocation = "PEM", p.CAPEM
		c.SASL.EnabledMechanisms = []string{"SCRAM-SHA-512"}
		c.SASL.Listeners = map[string]*broker.SASLListenerConfig{"INTERNAL": {JAAS: map[string][]jaas.Entry{"scram-sha-512": mods}}}
		c.Authz.ClassName = broker.AclAuthorizerClass
		c.Authz.SuperUsers = []string{"User:admin"}
		c.Replication.LagTimeMax = 2 * time.Second
	})
}

// seedSCRAM writes user's SCRAM-SHA-512 credential under chroot before the
// brokers start, as kafka-configs --zookeeper does for the brokers' own
// user: /config/users/{user} in Kafka's format.
func seedSCRAM(t *testing.T, chroot, user, pass string) {
	t.Helper()
	c, err := scram.SHA512.NewClient(user, pass, "")
	if err != nil {
		t.Fatal(err)
	}
	salt := make([]byte, 16)
	rand.Read(salt)
	sc := c.GetStoredCredentials(scram.KeyFactors{Salt: string(salt), Iters: 4096})
	b64 := base64.StdEncoding.EncodeToString
	cred := "salt=" + b64(salt) + ",stored_key=" + b64(sc.StoredKey) + ",server_key=" + b64(sc.ServerKey) + ",iterations=4096"
	data, _ := json.Marshal(map[string]any{"version": 1, "config": map[string]string{"SCRAM-SHA-512": cred}})
	z, _, err := zk.Connect(strings.Split(kafkaenv.ZooKeeper(), ","), 6*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, p := range []string{chroot, chroot + "/config", chroot + "/config/users"} {
		if _, err := z.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	if _, err := z.Create(chroot+"/config/users/"+user, data, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create the credential: %v", err)
	}
}

// internalClient is a kgo client of the cluster's INTERNAL listeners,
// logging in as admin (the super user).
func internalClient(t *testing.T, cl *kafkaenv.Cluster, p *keystoretest.BrokerFiles, opts ...kgo.Opt) *kgo.Client {
	var seeds []string
	for _, e := range cl.Brokers {
		if e.Broker() != nil {
			seeds = append(seeds, e.Addrs[1])
		}
	}
	opts = append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.SASL(scramAuth("SCRAM-SHA-512", "admin", "admin-secret")),
		kgo.DialTLSConfig(&tls.Config{RootCAs: p.CAPool, MinVersion: tls.VersionTLS12})}, opts...)
	return cl.Brokers[0].Client(opts...)
}

// TestInterBrokerSCRAMOverSSL: three brokers whose inter-broker listener
// is SASL_SSL with SCRAM-SHA-512 and the ACL authorizer on: the
// controller's requests, the followers' fetches and AlterPartition log in
// as admin (a super user), so an RF 3 topic gets all three replicas in
// sync under acks=all, and when its leader stops, another broker leads
// and takes acks=all writes (its ControlledShutdown succeeded), it
// rejoins the ISR when it returns, and every record reads back. Without the
// inter-broker login the brokers never see each other (the controller's
// UpdateMetadata is refused).
func TestInterBrokerSCRAMOverSSL(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	chroot := kafkaenv.RandomChroot("ibsasl-")
	seedSCRAM(t, chroot, "admin", "admin-secret")
	cl := kafkaenv.StartCluster(t, 3, kafkaenv.Chroot(chroot), interBrokerSCRAM(t, p, "admin-secret"), kafkaenv.VerboseLogs())
	c := internalClient(t, cl, p, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("ib-r3"),
		kgo.RecordDeliveryTimeout(40*time.Second))
	ctx := kafkaenv.Context(t, 90*time.Second)
	adm := kadm.NewClient(c)
	if r, err := adm.CreateTopic(ctx, 1, 3, nil, "ib-r3"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	produce := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := c.ProduceSync(ctx, kgo.StringRecord(strconv.Itoa(i))).FirstErr(); err != nil {
				t.Fatalf("acks=all produce %d: %v", i, err)
			}
		}
	}
	produce(0, 20)
	td, err := adm.ListTopics(ctx, "ib-r3")
	if err != nil || len(td["ib-r3"].Partitions[0].ISR) != 3 {
		t.Fatalf("ISR after acks=all writes: %+v %v", td["ib-r3"].Partitions, err)
	}
	old := td["ib-r3"].Partitions[0].Leader
	cl.Broker(old).Stop()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		td, err = adm.ListTopics(ctx, "ib-r3")
		if l := td["ib-r3"].Partitions[0].Leader; err == nil && l >= 0 && l != old {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new leader after broker %d stopped: %+v %v", old, td["ib-r3"].Partitions, err)
		}
	}
	if cl.Broker(old).Logs.Count("INFO controlled shutdown succeeded") != 1 {
		t.Errorf("broker %d's ControlledShutdown did not succeed: %q", old, cl.Broker(old).Logs.All())
	}
	produce(20, 40)
	// The old leader returns as a follower; the leader's AlterPartition
	// (to the controller, over SASL_SSL) puts it back in the ISR.
	cl.Broker(old).Start()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		td, err = adm.ListTopics(ctx, "ib-r3")
		if err == nil && len(td["ib-r3"].Partitions[0].ISR) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("broker %d never rejoined the ISR: %+v %v", old, td["ib-r3"].Partitions, err)
		}
	}
	cons := internalClient(t, cl, p, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"ib-r3": {0: kgo.NewOffset().AtStart()}}))
	var got []string
	for len(got) < 40 && ctx.Err() == nil {
		cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i, v := range got {
		if v != strconv.Itoa(i) {
			t.Fatalf("record %d is %q", i, v)
		}
	}
	if len(got) != 40 {
		t.Fatalf("read %d of 40 records", len(got))
	}
}

// TestInterBrokerWrongPassword: a broker whose inter-broker login has a
// wrong password is refused by its own SASL_SSL listener: it logs that
// authentication failed, and no log line holds the password.
func TestInterBrokerWrongPassword(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	chroot := kafkaenv.RandomChroot("ibsasl-")
	seedSCRAM(t, chroot, "admin", "admin-secret")
	const wrong = "not-the-Secret-42"
	e := kafkaenv.Start(t, kafkaenv.Chroot(chroot), interBrokerSCRAM(t, p, wrong), kafkaenv.VerboseLogs(),
		kafkaenv.Unreachable(func(*broker.Config) bool { return true }))
	for deadline := time.Now().Add(20 * time.Second); e.Logs.Count("WARN controller: authentication to the broker failed") == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			all := e.Logs.All()
			t.Fatalf("no authentication failure logged; the last lines: %q", all[max(0, len(all)-3):])
		}
	}
	for _, l := range e.Logs.All() {
		if strings.Contains(l, wrong) || strings.Contains(l, "admin-secret") {
			t.Fatalf("a log line shows a password: %q", l)
		}
	}
}

// TestInterBrokerNotSuperUser: with the authorizer on and the brokers'
// user not in super.users, the login succeeds but the controller's
// requests are refused with CLUSTER_AUTHORIZATION_FAILED, as in Kafka.
func TestInterBrokerNotSuperUser(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	chroot := kafkaenv.RandomChroot("ibsasl-")
	seedSCRAM(t, chroot, "admin", "admin-secret")
	e := kafkaenv.Start(t, kafkaenv.Chroot(chroot), interBrokerSCRAM(t, p, "admin-secret"),
		kafkaenv.Configure(func(c *broker.Config) { c.Authz.SuperUsers = []string{"User:someone-else"} }), kafkaenv.VerboseLogs(),
		kafkaenv.Unreachable(func(*broker.Config) bool { return true }))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		for _, l := range e.Logs.All() {
			if strings.HasPrefix(l, "WARN controller: request refused") {
				if !strings.Contains(l, "CLUSTER_AUTHORIZATION_FAILED") {
					t.Fatalf("refused for another reason: %q", l)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			all := e.Logs.All()
			t.Fatalf("the controller's requests were not refused; the last lines: %q", all[max(0, len(all)-3):])
		}
	}
}
