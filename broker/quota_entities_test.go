package broker

import (
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// TestQuotaPrecedence walks Kafka's eight entity combinations from the
// most specific down: each row sets the quotas of the rows below it too,
// and the client (alice, app) must get the row's own value, metered under
// the row's tags.
func TestQuotaPrecedence(t *testing.T) {
	d := quotaDefault
	order := []struct {
		e    quotaEntity
		tags quotaEntity
	}{
		{quotaEntity{"alice", "app"}, quotaEntity{"alice", "app"}},
		{quotaEntity{"alice", d}, quotaEntity{"alice", "app"}},
		{quotaEntity{user: "alice"}, quotaEntity{user: "alice"}},
		{quotaEntity{d, "app"}, quotaEntity{"alice", "app"}},
		{quotaEntity{d, d}, quotaEntity{"alice", "app"}},
		{quotaEntity{user: d}, quotaEntity{user: "alice"}},
		{quotaEntity{client: "app"}, quotaEntity{client: "app"}},
		{quotaEntity{client: d}, quotaEntity{client: "app"}},
	}
	for i, row := range order {
		tab := quotaTable{}
		for j := i; j < len(order); j++ {
			var v quotaValues
			v.set[quotaProduce], v.val[quotaProduce] = true, float64(100*(j+1))
			tab[order[j].e] = v
		}
		// a quota of another kind on a more specific entity changes nothing
		if i > 0 {
			var v quotaValues
			v.set[quotaFetch], v.val[quotaFetch] = true, 1
			tab[order[0].e] = v
		}
		tags := tab.tags(quotaProduce, "alice", "app")
		if tags != row.tags {
			t.Errorf("row %d (%s): tags = %+v, want %+v", i, row.e.path(), tags, row.tags)
		}
		got, ok := tab.limit(quotaProduce, tags)
		if !ok || got != float64(100*(i+1)) {
			t.Errorf("row %d (%s): limit = %v, %v; want %v", i, row.e.path(), got, ok, 100*(i+1))
		}
	}
	if _, ok := (quotaTable{}).limit(quotaProduce, quotaTable{}.tags(quotaProduce, "alice", "app")); ok {
		t.Error("no quotas: got a limit")
	}
	// another user's quota does not apply to alice
	tab := quotaTable{quotaEntity{user: "bob"}: {set: [numQuotaKinds]bool{true}, val: [numQuotaKinds]float64{5}}}
	if _, ok := tab.limit(quotaProduce, tab.tags(quotaProduce, "alice", "app")); ok {
		t.Error("bob's quota applied to alice")
	}
}

func TestQuotaEntityPaths(t *testing.T) {
	for _, tt := range []struct {
		path string
		e    quotaEntity
		ok   bool
	}{
		{"users/alice", quotaEntity{user: "alice"}, true},
		{"users/<default>/clients/app", quotaEntity{user: quotaDefault, client: "app"}, true},
		{"clients/<default>", quotaEntity{client: quotaDefault}, true},
		{"users/alice/clients", quotaEntity{}, false},
		{"users//clients/x", quotaEntity{}, false},
		{"topics/t", quotaEntity{}, false},
		{"clients/a/b", quotaEntity{}, false},
	} {
		e, ok := quotaEntityOfPath(tt.path)
		if ok != tt.ok || e != tt.e {
			t.Errorf("%q: %+v %v, want %+v %v", tt.path, e, ok, tt.e, tt.ok)
		}
		if ok && e.path() != tt.path {
			t.Errorf("%q: path() = %q", tt.path, e.path())
		}
	}
}

// TestQuotaValueString: values are stored as Kafka's ConfigCommand and
// ZkAdminManager store them.
func TestQuotaValueString(t *testing.T) {
	for _, tt := range []struct {
		key  string
		v    float64
		want string
		bad  bool
	}{
		{"producer_byte_rate", 1048576, "1048576", false},
		{"consumer_byte_rate", 1024.0000001, "1024", false},
		{"producer_byte_rate", 10.5, "", true},
		{"request_percentage", 50, "50.0", false},
		{"request_percentage", 12.25, "12.25", false},
		{"request_percentage", 2e7, "2.0E7", false},
		{"request_percentage", 1.5e-4, "1.5E-4", false},
		{"controller_mutation_rate", 1, "", true},
		{"SCRAM-SHA-256", 1, "", true},
		{"bogus", 1, "", true},
	} {
		got, err := quotaValueString(tt.key, tt.v)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("%s=%v: %q, %v; want %q (error %v)", tt.key, tt.v, got, err, tt.want, tt.bad)
		}
	}
}

// TestQuotaFilter checks DescribeClientQuotas' matching, as Kafka's
// handleDescribeClientQuotas, over entities of every shape.
func TestQuotaFilter(t *testing.T) {
	d := quotaDefault
	q := map[string]string{"producer_byte_rate": "1"}
	all := map[quotaEntity]map[string]string{
		{user: "alice"}:              q,
		{user: d}:                    q,
		{user: "alice", client: "a"}: q,
		{user: d, client: d}:         q,
		{client: "a"}:                q,
		{client: d}:                  q,
		{user: "bob"}:                {"SCRAM-SHA-256": "x"}, // no quota: never listed
	}
	exact := func(typ, name string) kmsg.DescribeClientQuotasRequestComponent {
		return kmsg.DescribeClientQuotasRequestComponent{EntityType: typ, MatchType: kmsg.QuotasMatchTypeExact, Match: &name}
	}
	def := func(typ string) kmsg.DescribeClientQuotasRequestComponent {
		return kmsg.DescribeClientQuotasRequestComponent{EntityType: typ, MatchType: kmsg.QuotasMatchTypeDefault}
	}
	anyOf := func(typ string) kmsg.DescribeClientQuotasRequestComponent {
		return kmsg.DescribeClientQuotasRequestComponent{EntityType: typ, MatchType: kmsg.QuotasMatchTypeAny}
	}
	for _, tt := range []struct {
		name   string
		comps  []kmsg.DescribeClientQuotasRequestComponent
		strict bool
		want   []string
	}{
		{"everything", nil, false, []string{"clients/<default>", "clients/a", "users/<default>", "users/<default>/clients/<default>", "users/alice", "users/alice/clients/a"}},
		{"strict nothing", nil, true, nil},
		{"user alice", []kmsg.DescribeClientQuotasRequestComponent{exact("user", "alice")}, false, []string{"users/alice", "users/alice/clients/a"}},
		{"user alice only", []kmsg.DescribeClientQuotasRequestComponent{exact("user", "alice")}, true, []string{"users/alice"}},
		{"default user only", []kmsg.DescribeClientQuotasRequestComponent{def("user")}, true, []string{"users/<default>"}},
		{"any user, any client", []kmsg.DescribeClientQuotasRequestComponent{anyOf("user"), anyOf("client-id")}, true, []string{"users/<default>/clients/<default>", "users/alice/clients/a"}},
		{"client a", []kmsg.DescribeClientQuotasRequestComponent{exact("client-id", "a")}, false, []string{"clients/a", "users/alice/clients/a"}},
		{"default client only", []kmsg.DescribeClientQuotasRequestComponent{def("client-id")}, true, []string{"clients/<default>"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := &kmsg.DescribeClientQuotasRequest{Components: tt.comps, Strict: tt.strict}
			f, e, msg := parseQuotaFilter(req)
			if e != nil {
				t.Fatal(e, msg)
			}
			var got []string
			for _, entry := range describedQuotas(all, f) {
				var ent quotaEntity
				for _, p := range entry.Entity {
					n := d
					if p.Name != nil {
						n = *p.Name
					}
					if p.Type == "user" {
						ent.user = n
					} else {
						ent.client = n
					}
				}
				got = append(got, ent.path())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
	for _, bad := range [][]kmsg.DescribeClientQuotasRequestComponent{
		{exact("user", "a"), exact("user", "b")},
		{{EntityType: ""}},
		{{EntityType: "user", MatchType: 7}},
		{exact("ip", "1.2.3.4"), exact("user", "a")},
	} {
		if _, e, _ := parseQuotaFilter(&kmsg.DescribeClientQuotasRequest{Components: bad}); e == nil || e.Code != 42 {
			t.Errorf("%+v: %v, want INVALID_REQUEST", bad, e)
		}
	}
	if _, e, _ := parseQuotaFilter(&kmsg.DescribeClientQuotasRequest{Components: []kmsg.DescribeClientQuotasRequestComponent{exact("group", "g")}}); e == nil || e.Code != 35 {
		t.Errorf("custom entity type: %v, want UNSUPPORTED_VERSION", e)
	}
}

// TestThrottleFieldAt: where patchThrottle writes throttle_time_ms agrees
// with the encoders of the responses: kmsg's for the handlers written
// against it (by construction), and kproto's for Metadata, ListOffsets
// and Fetch; OffsetDelete's follows its error code.
func TestThrottleFieldAt(t *testing.T) {
	for key, d := range apis {
		for v := d.min; v <= d.max; v++ {
			at, ok := throttleFieldAt(key, v)
			if ok && at != 0 && !(key == kproto.KeyOffsetDelete && at == 2) {
				t.Errorf("key %d v%d: throttle at %d, want 0 (2 for OffsetDelete)", key, v, at)
			}
		}
	}
	if _, ok := throttleFieldAt(kproto.KeyJoinGroup, 2); !ok {
		t.Error("JoinGroup v2 has throttle_time_ms")
	}
	if _, ok := throttleFieldAt(kproto.KeyJoinGroup, 0); ok {
		t.Error("JoinGroup v0 has no throttle_time_ms")
	}
	check := func(name string, key, v int16, body []byte) {
		t.Helper()
		at, ok := throttleFieldAt(key, v)
		if !ok {
			t.Fatalf("%s v%d: no throttle field", name, v)
		}
		if got := binary.BigEndian.Uint32(body[at:]); got != throttleSentinel {
			t.Errorf("%s v%d: %#x at %d, want the throttle", name, v, got, at)
		}
	}
	for v := int16(3); v <= kproto.MetadataMaxVersion; v++ {
		r := kproto.MetadataResponse{ThrottleMillis: throttleSentinel}
		check("Metadata", kproto.KeyMetadata, v, r.AppendTo(nil, v))
	}
	for v := int16(2); v <= kproto.ListOffsetsMaxVersion; v++ {
		r := kproto.ListOffsetsResponse{ThrottleMillis: throttleSentinel}
		check("ListOffsets", kproto.KeyListOffsets, v, r.AppendTo(nil, v))
	}
	// patchThrottle on a whole frame
	r := kmsg.NewPtrHeartbeatResponse()
	r.SetVersion(4)
	frame := kproto.AppendKmsgResponseFrame(nil, 7, r)
	patchThrottle(frame, kproto.KeyHeartbeat, 4, 1234)
	back := kmsg.NewPtrHeartbeatResponse()
	back.SetVersion(4)
	if err := back.ReadFrom(frame[4+4+1:]); err != nil || back.ThrottleMillis != 1234 {
		t.Fatalf("patched heartbeat: %v, throttle %d", err, back.ThrottleMillis)
	}
}

// TestChangedQuotaEntity: the notifications Kafka writes for quota
// entities (version 2 paths; version 1 type and name) name the entity to
// reload; topics and brokers do not.
func TestChangedQuotaEntity(t *testing.T) {
	for _, tt := range []struct {
		note string
		e    quotaEntity
		ok   bool
	}{
		{`{"version":2,"entity_path":"users/alice/clients/app"}`, quotaEntity{"alice", "app"}, true},
		{`{"version":2,"entity_path":"users/<default>"}`, quotaEntity{user: quotaDefault}, true},
		{`{"version":2,"entity_path":"clients/my%20app"}`, quotaEntity{client: "my%20app"}, true},
		{`{"version":1,"entity_type":"clients","entity_name":"app"}`, quotaEntity{client: "app"}, true},
		{`{"version":2,"entity_path":"topics/t"}`, quotaEntity{}, false},
		{`{"version":2,"entity_path":"brokers/<default>"}`, quotaEntity{}, false},
		{`not json`, quotaEntity{}, false},
	} {
		e, ok := changedQuotaEntity([]byte(tt.note))
		if ok != tt.ok || e != tt.e {
			t.Errorf("%s: %+v %v, want %+v %v", tt.note, e, ok, tt.e, tt.ok)
		}
	}
}
