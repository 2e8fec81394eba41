package broker

import (
	"testing"

	"github.com/zkafka/zkafka/kproto"
)

func TestCheckBrokerConfigs(t *testing.T) {
	for _, tc := range []struct {
		cfg  map[string]string
		code kproto.ErrorCode
		msg  string
	}{
		{map[string]string{"log.retention.ms": "1000", "leader.replication.throttled.rate": "10"}, 0, ""},
		{map[string]string{"log.dirs": "/x", "broker.id": "3", "log.retention.ms": "1"}, kproto.CodeInvalidRequest,
			"Invalid config value for resource ConfigResource(type=BROKER, name='1'): Cannot update these configs dynamically: Set(broker.id, log.dirs)"},
		{map[string]string{"log.segment.bytes": "10"}, kproto.CodeInvalidRequest,
			"Invalid config value for resource ConfigResource(type=BROKER, name='1'): Invalid value 10 for configuration log.segment.bytes: 10 is outside [14, 2147483647]"},
		{map[string]string{"follower.replication.throttled.rate": "-1"}, kproto.CodeInvalidRequest, ""},
		{map[string]string{"unclean.leader.election.enable": "true"}, kproto.CodeInvalidRequest,
			"Invalid config value for resource ConfigResource(type=BROKER, name='1'): Cannot update these configs dynamically: Set(unclean.leader.election.enable)"},
	} {
		code, msg := codeOf(checkBrokerConfigs("1", tc.cfg))
		if code != tc.code || (tc.msg != "" && (msg == nil || *msg != tc.msg)) {
			t.Errorf("%v: %v %v, want %v %q", tc.cfg, code, msg, tc.code, tc.msg)
		}
	}
}

func TestChangedBroker(t *testing.T) {
	b := &Broker{cfg: Config{BrokerID: 2}}
	for in, want := range map[string]bool{
		`{"version":2,"entity_path":"brokers/<default>"}`:                 true,
		`{"version":2,"entity_path":"brokers/\u003cdefault\u003e"}`:       true,
		`{"version":2,"entity_path":"brokers/2"}`:                         true,
		`{"version":2,"entity_path":"brokers/3"}`:                         false,
		`{"version":2,"entity_path":"topics/2"}`:                          false,
		`{"version":1,"entity_type":"brokers","entity_name":"<default>"}`: true,
	} {
		if got := b.changedBroker([]byte(in)); got != want {
			t.Errorf("%s: %v, want %v", in, got, want)
		}
	}
}

func TestBrokerChain(t *testing.T) {
	c := kafkaDefaults
	c.LogSegmentBytes = 1 << 20
	c.dyn = &dynamicConfigs{broker: map[string]string{"log.segment.bytes": "2000"}, dflt: map[string]string{"log.segment.bytes": "3000"}}
	e := describeTopicConfig(&c, map[string]string{"segment.bytes": "4000"})
	for _, r := range e {
		if r.name != "segment.bytes" {
			continue
		}
		want := []configSynonym{{"segment.bytes", "4000", sourceTopic}, {"log.segment.bytes", "2000", sourceDynamicBroker},
			{"log.segment.bytes", "3000", sourceDynamicDefault}, {"log.segment.bytes", "1048576", sourceStaticBroker},
			{"log.segment.bytes", "1073741824", sourceDefaultConfig}}
		if r.value != "4000" || r.source != sourceTopic || len(r.synonyms) != len(want) {
			t.Fatalf("%+v", r)
		}
		for i := range want {
			if r.synonyms[i] != want[i] {
				t.Errorf("synonym %d: %+v, want %+v", i, r.synonyms[i], want[i])
			}
		}
		return
	}
	t.Fatal("no segment.bytes")
}

func TestDescribeBrokerPasswords(t *testing.T) {
	c := kafkaDefaults
	c.SSL.KeystorePassword = "secret"
	for _, e := range describeBrokerConfig(&c) {
		if e.name == "ssl.keystore.password" {
			if !e.readOnly || !e.sensitive || e.value != "" || e.synonyms[0].value != "" {
				t.Fatalf("%+v", e)
			}
			return
		}
	}
	t.Fatal("ssl.keystore.password not listed")
}
