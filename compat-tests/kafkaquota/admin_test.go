package kafkaquota

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/zkafkatest"
)

func sp(s string) *string { return &s }

// znodeConfig reads a config znode's JSON.
func znodeConfig(t *testing.T, zc *zk.Conn, path string) map[string]string {
	t.Helper()
	data, _, err := zc.Get(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var z struct {
		Version int               `json:"version"`
		Config  map[string]string `json:"config"`
	}
	if err := json.Unmarshal(data, &z); err != nil || z.Version != 1 {
		t.Fatalf("%s: %q: %v", path, data, err)
	}
	return z.Config
}

func zkConn(t *testing.T, cl *zkafkatest.Cluster) *zk.Conn {
	zc, _, err := zk.Connect(cl.ZooKeeperServers(), 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	return zc
}

// alterOne alters one entity through kadm and returns its result.
func alterOne(t *testing.T, ctx context.Context, adm *kadm.Client, validate bool, e kadm.ClientQuotaEntity, ops ...kadm.AlterClientQuotaOp) kadm.AlteredClientQuota {
	t.Helper()
	alter := adm.AlterClientQuotas
	if validate {
		alter = adm.ValidateAlterClientQuotas
	}
	res, err := alter(ctx, []kadm.AlterClientQuotaEntry{{Entity: e, Ops: ops}})
	if err != nil || len(res) != 1 {
		t.Fatalf("AlterClientQuotas %v: %v %v", e, res, err)
	}
	return res[0]
}

// TestQuotaAdmin: AlterClientQuotas and DescribeClientQuotas through kadm
// as Kafka's ZooKeeper mode answers them — every entity shape and the
// defaults (null names), the znodes in Kafka's JSON, validate_only,
// removal, Kafka's errors — and a user's quota and SCRAM credential
// sharing /config/users/{user} without either losing the other.
func TestQuotaAdmin(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Topic("t", 1, 1))
	ctx := ctxT(t, time.Minute)
	adm := admin(t, cl)
	zc := zkConn(t, cl)

	alice, app := "alice", "app"
	entities := []kadm.ClientQuotaEntity{
		{{Type: "user", Name: &alice}},
		{{Type: "user"}},
		{{Type: "user", Name: &alice}, {Type: "client-id", Name: &app}},
		{{Type: "user"}, {Type: "client-id"}},
		{{Type: "client-id", Name: sp("my app")}},
		{{Type: "client-id"}},
	}
	paths := []string{"/config/users/alice", "/config/users/<default>", "/config/users/alice/clients/app",
		"/config/users/<default>/clients/<default>", "/config/clients/my%20app", "/config/clients/<default>"}
	for i, e := range entities {
		r := alterOne(t, ctx, adm, false, e, kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: float64(1000 * (i + 1))},
			kadm.AlterClientQuotaOp{Key: "request_percentage", Value: 25})
		if r.Err != nil {
			t.Fatalf("%v: %v %s", e, r.Err, r.ErrMessage)
		}
		cfg := znodeConfig(t, zc, paths[i])
		if cfg["producer_byte_rate"] != strconv.Itoa(1000*(i+1)) || cfg["request_percentage"] != "25.0" {
			t.Errorf("%s: %v", paths[i], cfg)
		}
	}
	all, err := adm.DescribeClientQuotas(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(entities) {
		t.Fatalf("described %d entities, want %d: %v", len(all), len(entities), all)
	}
	// strict, default user only
	got, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchType: kmsg.QuotasMatchTypeDefault}})
	if err != nil || len(got) != 1 || len(got[0].Entity) != 1 || got[0].Entity[0].Name != nil || len(got[0].Values) != 2 {
		t.Fatalf("default user: %+v %v", got, err)
	}
	// exact client id with a space, desanitized
	got, err = adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchName: sp("my app")}})
	if err != nil || len(got) != 1 || *got[0].Entity[0].Name != "my app" {
		t.Fatalf("client my app: %+v %v", got, err)
	}

	// validate_only writes nothing; remove takes a key away
	if r := alterOne(t, ctx, adm, true, entities[0], kadm.AlterClientQuotaOp{Key: "consumer_byte_rate", Value: 7}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if cfg := znodeConfig(t, zc, paths[0]); cfg["consumer_byte_rate"] != "" {
		t.Errorf("validate_only wrote %v", cfg)
	}
	if r := alterOne(t, ctx, adm, false, entities[0], kadm.AlterClientQuotaOp{Key: "request_percentage", Remove: true}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if cfg := znodeConfig(t, zc, paths[0]); cfg["request_percentage"] != "" || cfg["producer_byte_rate"] != "1000" {
		t.Errorf("after remove: %v", cfg)
	}

	// Kafka's errors
	for _, tt := range []struct {
		e   kadm.ClientQuotaEntity
		op  kadm.AlterClientQuotaOp
		err error
	}{
		{entities[0], kadm.AlterClientQuotaOp{Key: "bogus_rate", Value: 1}, kerr.InvalidRequest},
		{entities[0], kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: 1.5}, kerr.InvalidRequest},
		{kadm.ClientQuotaEntity{{Type: "group", Name: sp("g")}}, kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: 1}, kerr.InvalidRequest},
		{kadm.ClientQuotaEntity{{Type: "user", Name: sp("")}}, kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: 1}, kerr.InvalidRequest},
		{kadm.ClientQuotaEntity{}, kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: 1}, kerr.InvalidRequest},
	} {
		r := alterOne(t, ctx, adm, false, tt.e, tt.op)
		if !errors.Is(r.Err, tt.err) {
			t.Errorf("%v %s=%v: %v (%s), want %v", tt.e, tt.op.Key, tt.op.Value, r.Err, r.ErrMessage, tt.err)
		}
	}
	_, err = adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchType: kmsg.QuotasMatchTypeAny}, {Type: "user", MatchType: kmsg.QuotasMatchTypeAny}})
	if !errors.Is(err, kerr.InvalidRequest) {
		t.Errorf("duplicate user component: %v, want INVALID_REQUEST", err)
	}

	// a SCRAM credential and a quota share alice's znode
	if _, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "pw"}}); err != nil {
		t.Fatal(err)
	}
	cfg := znodeConfig(t, zc, paths[0])
	if cfg["SCRAM-SHA-256"] == "" || cfg["producer_byte_rate"] != "1000" {
		t.Fatalf("after the SCRAM upsert: %v", cfg)
	}
	if r := alterOne(t, ctx, adm, false, entities[0], kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Remove: true},
		kadm.AlterClientQuotaOp{Key: "consumer_byte_rate", Value: 2048}); r.Err != nil {
		t.Fatal(r.Err)
	}
	cfg = znodeConfig(t, zc, paths[0])
	if cfg["SCRAM-SHA-256"] == "" || cfg["consumer_byte_rate"] != "2048" || cfg["producer_byte_rate"] != "" {
		t.Fatalf("after the quota change: %v", cfg)
	}
	scrams, err := adm.DescribeUserSCRAMs(ctx, "alice")
	if err != nil || scrams["alice"].Err != nil || len(scrams["alice"].CredInfos) != 1 {
		t.Fatalf("alice's credential after the quota change: %+v %v", scrams, err)
	}
	// the credential is not a quota: strict user alice lists the quota only
	got, err = adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: sp("alice")}})
	if err != nil || len(got) != 1 || len(got[0].Values) != 1 || got[0].Values[0].Key != "consumer_byte_rate" {
		t.Fatalf("alice's quotas: %+v %v", got, err)
	}
}
