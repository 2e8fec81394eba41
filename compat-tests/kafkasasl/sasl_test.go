package kafkasasl

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/xdg-go/scram"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// produceConsume produces n records to a new topic through c and reads
// them back, failing t on any difference.
func produceConsume(t *testing.T, c *kgo.Client, topic string, n int) {
	t.Helper()
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: bytes.Repeat([]byte{'v'}, 100)})
	}
	if err := c.ProduceSync(ctx(t), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	c.AddConsumeTopics(topic)
	got := 0
	for got < n {
		fs := c.PollFetches(ctx(t))
		if err := fs.Err0(); err != nil {
			t.Fatalf("fetch after %d records: %v", got, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Key) != strconv.Itoa(got) {
				t.Fatalf("record %d has key %q", got, r.Key)
			}
			got++
		})
	}
}

var clientOpts = []kgo.Opt{kgo.AllowAutoTopicCreation(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}

// TestPlainLogin: franz-go's PLAIN over SASL_PLAINTEXT and SASL_SSL
// (the users of listener.name.X.plain.sasl.jaas.config) produces and
// reads back records.
func TestPlainLogin(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	e := saslBroker(t, p)
	produceConsume(t, saslClient(e, saslAddr(e), nil, plainAuth("alice", "alice-secret"), clientOpts...), "plain-topic", 50)
	produceConsume(t, saslClient(e, saslSSLAddr(e), p, plainAuth("admin", "admin-secret"), clientOpts...), "plain-ssl-topic", 50)
}

// TestSCRAMLogin: for SCRAM-SHA-256 and SCRAM-SHA-512, kadm sets a
// user's password (AlterUserScramCredentials), then franz-go's SCRAM logs
// in with it over SASL_PLAINTEXT and SASL_SSL; the credential is in
// /config/users/{user} in Kafka's format, DescribeUserScramCredentials
// lists it, and a deleted credential no longer logs in.
func TestSCRAMLogin(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	e := saslBroker(t, p)
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			user := "u-" + strings.ToLower(mech[len(mech)-3:])
			addSCRAM(t, e, user, "pw-"+user, mech)
			produceConsume(t, saslClient(e, saslAddr(e), nil, scramAuth(mech, user, "pw-"+user), clientOpts...), "scram-"+user, 30)
			produceConsume(t, saslClient(e, saslSSLAddr(e), p, scramAuth(mech, user, "pw-"+user), clientOpts...), "scram-ssl-"+user, 30)

			data, _, err := e.ZK().Get(e.Path("/config/users/" + user))
			if err != nil {
				t.Fatal(err)
			}
			var z struct {
				Version int               `json:"version"`
				Config  map[string]string `json:"config"`
			}
			if err := json.Unmarshal(data, &z); err != nil || z.Version != 1 {
				t.Fatalf("/config/users/%s: %s (%v)", user, data, err)
			}
			fields := strings.Split(z.Config[mech], ",")
			if len(fields) != 4 || !strings.HasPrefix(fields[0], "salt=") || !strings.HasPrefix(fields[1], "stored_key=") ||
				!strings.HasPrefix(fields[2], "server_key=") || fields[3] != "iterations=4096" {
				t.Fatalf("/config/users/%s: %s", user, data)
			}

			described, err := admin(e).DescribeUserSCRAMs(ctx(t), user)
			if err != nil || described.Error() != nil {
				t.Fatalf("DescribeUserSCRAMs: %v %v", err, described.Error())
			}
			if infos := described[user].CredInfos; len(infos) != 1 || infos[0].Iterations != 4096 || infos[0].Mechanism.String() != mech {
				t.Fatalf("described %+v", described[user])
			}

			m := kadm.ScramSha256
			if mech == "SCRAM-SHA-512" {
				m = kadm.ScramSha512
			}
			res, err := admin(e).AlterUserSCRAMs(ctx(t), []kadm.DeleteSCRAM{{User: user, Mechanism: m}}, nil)
			if err != nil || res.Error() != nil {
				t.Fatalf("delete: %v %v", err, res.Error())
			}
			loginFails(t, saslClient(e, saslAddr(e), nil, scramAuth(mech, user, "pw-"+user), kgo.RequestRetries(0)))
		})
	}
}

// loginFails checks that c cannot authenticate: SASL_AUTHENTICATION_FAILED.
func loginFails(t *testing.T, c *kgo.Client) {
	t.Helper()
	err := c.Ping(ctx(t))
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("login: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}

// TestWrongPassword: a wrong PLAIN or SCRAM password is
// SASL_AUTHENTICATION_FAILED after connection.failed.authentication.delay.ms;
// the broker's log line names the user and never the password.
func TestWrongPassword(t *testing.T) {
	e := saslBroker(t, nil, func(c *broker.Config) { c.SASL.FailedAuthDelay = 300 * time.Millisecond })
	addSCRAM(t, e, "carol", "carol-secret", "SCRAM-SHA-512")
	for _, mech := range []sasl.Mechanism{plainAuth("alice", "guessed-pw"), scramAuth("SCRAM-SHA-512", "carol", "guessed-pw"),
		scramAuth("SCRAM-SHA-256", "nobody", "guessed-pw")} {
		start := time.Now()
		loginFails(t, saslClient(e, saslAddr(e), nil, mech, kgo.RequestRetries(0)))
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("%s: the failure came after %v, before the 300 ms delay", mech.Name(), d)
		}
	}
	logs := strings.Join(e.Logs.All(), "\n")
	if strings.Contains(logs, "guessed-pw") || strings.Contains(logs, "secret") {
		t.Fatalf("a password is in the log:\n%s", logs)
	}
	if !strings.Contains(logs, "SASL authentication failed") || !strings.Contains(logs, "user=alice") {
		t.Fatalf("no log line naming the user:\n%s", logs)
	}
}

// TestCredentialFromZooKeeper: a credential written straight to
// ZooKeeper with its change notification, as kafka-configs.sh --zookeeper
// writes it, logs in once the broker has read the notification (and a
// user named with characters Kafka's Sanitizer encodes works too).
func TestCredentialFromZooKeeper(t *testing.T) {
	e := saslBroker(t, nil)
	user := "bob smith*"
	cl, err := scram.SHA256.NewClient(user, "bob-pw", "")
	if err != nil {
		t.Fatal(err)
	}
	cred := cl.GetStoredCredentials(scram.KeyFactors{Salt: "0123456789abcdef", Iters: 4096})
	b64 := base64.StdEncoding.EncodeToString
	value := fmt.Sprintf("salt=%s,stored_key=%s,server_key=%s,iterations=4096", b64([]byte(cred.Salt)), b64(cred.StoredKey), b64(cred.ServerKey))
	data, _ := json.Marshal(map[string]any{"version": 1, "config": map[string]string{"SCRAM-SHA-256": value}})
	z := e.ZK()
	if _, err := z.Create(e.Path("/config/users/bob%20smith%2A"), data, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := z.Create(e.Path("/config/changes/config_change_"), []byte(`{"version":2,"entity_path":"users/bob%20smith%2A"}`),
		zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := kgo.NewClient(kgo.SeedBrokers(saslAddr(e)), kgo.SASL(scramAuth("SCRAM-SHA-256", user, "bob-pw")), kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		err = c.Ping(ctx(t))
		c.Close()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the credential written to ZooKeeper never logged in: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	described, err := admin(e).DescribeUserSCRAMs(ctx(t))
	if err != nil || described[user].User != user {
		t.Fatalf("DescribeUserSCRAMs of all: %v %+v", err, described)
	}
}

// TestReauthentication: with connections.max.reauth.ms, SaslAuthenticate
// answers the session lifetime and franz-go re-authenticates on the same
// connection before it ends (KIP-368), so a client producing for longer
// than the lifetime keeps working.
func TestReauthentication(t *testing.T) {
	e := saslBroker(t, nil, func(c *broker.Config) { c.SASL.ReauthMax = 1500 * time.Millisecond })
	c := saslClient(e, saslAddr(e), nil, plainAuth("alice", "alice-secret"), clientOpts...)
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; e.Logs.Count("INFO SASL re-authenticated") < 2; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("no two re-authentications in 20 s (logs: %v)", e.Logs.All())
		}
		if err := c.ProduceSync(ctx(t), &kgo.Record{Topic: "reauth", Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAlterErrors: AlterUserScramCredentials answers Kafka's errors: too
// few or too many iterations, an unknown mechanism, an empty name, a
// (user, mechanism) twice, the deletion of a credential that does not
// exist; DescribeUserScramCredentials of a user without one is
// RESOURCE_NOT_FOUND.
func TestAlterErrors(t *testing.T) {
	e := saslBroker(t, nil)
	cl := e.Client(kgo.SeedBrokers(plainAddr(e)))
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	up := func(name string, mech int8, iters int32) {
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = name, mech, iters, []byte("salt"), bytes.Repeat([]byte{1}, 32)
		req.Upsertions = append(req.Upsertions, u)
	}
	del := func(name string, mech int8) {
		d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
		d.Name, d.Mechanism = name, mech
		req.Deletions = append(req.Deletions, d)
	}
	up("few", 1, 1000)
	up("many", 1, 20000)
	up("mech", 9, 4096)
	up("", 1, 4096)
	up("twice", 1, 4096)
	del("twice", 1)
	del("absent", 2)
	up("fine", 2, 8192)
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range resp.Results {
		msg := ""
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		got[r.User] = fmt.Sprintf("%v %s", kerr.ErrorForCode(r.ErrorCode), msg)
	}
	want := map[string]string{
		"few":    "UNACCEPTABLE_CREDENTIAL: Requested credential would not meet criteria for acceptability. Too few iterations",
		"many":   "UNACCEPTABLE_CREDENTIAL: Requested credential would not meet criteria for acceptability. Too many iterations",
		"mech":   "UNSUPPORTED_SASL_MECHANISM: The broker does not support the requested SASL mechanism. Unknown SCRAM mechanism",
		"":       "UNACCEPTABLE_CREDENTIAL: Requested credential would not meet criteria for acceptability. Username must not be empty",
		"twice":  "DUPLICATE_RESOURCE: A request illegally referred to the same resource twice. A user credential cannot be altered twice in the same request",
		"absent": "RESOURCE_NOT_FOUND: A request illegally referred to a resource that does not exist. Attempt to delete a user credential that does not exist",
		"fine":   "<nil> ",
	}
	for u, w := range want {
		if got[u] != w {
			t.Errorf("user %q: %q, want %q", u, got[u], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("results %v", got)
	}
	described, err := admin(e).DescribeUserSCRAMs(ctx(t), "absent")
	if err != nil || !errors.Is(described["absent"].Err, kerr.ResourceNotFound) {
		t.Fatalf("DescribeUserSCRAMs of a user without credentials: %v %+v", err, described)
	}
}
