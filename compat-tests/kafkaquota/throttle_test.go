package kafkaquota

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/zkafka/zkafka/zkafkatest"
)

const mib = 1 << 20

// otherThan is a broker of the two that is not id.
func otherThan(id int32) int32 { return 3 - id }

func twoBrokers(t *testing.T) *zkafkatest.Cluster {
	return zkafkatest.StartCluster(t, append(quotaWindow, zkafkatest.Brokers(2), zkafkatest.Topic("t", 1, 1))...)
}

// A producer held to producer_byte_rate=1 MiB/s produces near that rate
// and is told to back off, while another client id in the same run is
// much faster; the quota is set through the broker that does not lead the
// partition (the leader learns it from /config/changes), and removing it
// lifts it without a restart.
func TestProduceQuota(t *testing.T) {
	cl := twoBrokers(t)
	ctx := ctxT(t, 3*time.Minute)
	adm := admin(t, cl)
	raw, _ := client(t, cl, "admin-raw")
	leader := leaderOf(t, ctx, adm, "t")
	setQuota(t, ctx, raw, otherThan(leader), clientEntity("slow"), "producer_byte_rate", mib, false)

	buffered := kgo.MaxBufferedBytes(2 * mib)
	fast, _ := client(t, cl, "fast", buffered)
	fastRate := produceFor(t, ctx, fast, "t", 100<<10, 2*time.Second, 300)
	slow, told := client(t, cl, "slow", buffered)
	slowRate := produceFor(t, ctx, slow, "t", 100<<10, 5*time.Second, 2000)
	t.Logf("unthrottled %.2f MiB/s; at 1 MiB/s quota %.2f MiB/s, %d throttles (max %v)",
		fastRate/mib, slowRate/mib, told.n.Load(), time.Duration(told.max.Load()))
	if slowRate > 2*mib {
		t.Errorf("throttled producer: %.2f MiB/s, want under 2 MiB/s", slowRate/mib)
	}
	if told.n.Load() == 0 {
		t.Error("the throttled producer was never told a throttle time")
	}
	if fastRate < 3*slowRate {
		t.Errorf("unthrottled producer %.2f MiB/s is not much faster than the throttled one (%.2f)", fastRate/mib, slowRate/mib)
	}

	setQuota(t, ctx, raw, leader, clientEntity("slow"), "producer_byte_rate", 0, true)
	// The last throttle may still hold the connection: wait it out.
	time.Sleep(time.Duration(told.max.Load()))
	before := told.n.Load()
	freed := produceFor(t, ctx, slow, "t", 100<<10, 3*time.Second, 300)
	t.Logf("quota removed: %.2f MiB/s, %d more throttles", freed/mib, told.n.Load()-before)
	if freed < 2*mib {
		t.Errorf("after removing the quota: %.2f MiB/s, want well over 1 MiB/s", freed/mib)
	}
}

// A consumer held to consumer_byte_rate=1 MiB/s reads near that rate, is
// told to back off, and still gets every record in order; another client
// id reads the same records much faster.
func TestConsumeQuota(t *testing.T) {
	cl := twoBrokers(t)
	ctx := ctxT(t, 3*time.Minute)
	adm := admin(t, cl)
	raw, _ := client(t, cl, "admin-raw")
	leader := leaderOf(t, ctx, adm, "t")
	p, _ := client(t, cl, "producer", kgo.MaxBufferedBytes(4*mib))
	const total = 12 * mib
	produceFor(t, ctx, p, "t", 64<<10, time.Minute, total/(64<<10))
	setQuota(t, ctx, raw, otherThan(leader), clientEntity("slowc"), "consumer_byte_rate", mib, false)

	consume := kgo.ConsumeTopics("t")
	fast, _ := client(t, cl, "fastc", consume)
	fastRate := consumeFor(t, ctx, fast, time.Minute, total)
	slow, told := client(t, cl, "slowc", consume)
	slowRate := consumeFor(t, ctx, slow, 5*time.Second, total)
	t.Logf("unthrottled %.2f MiB/s; at 1 MiB/s quota %.2f MiB/s, %d throttles (max %v)",
		fastRate/mib, slowRate/mib, told.n.Load(), time.Duration(told.max.Load()))
	if slowRate > 2*mib {
		t.Errorf("throttled consumer: %.2f MiB/s, want under 2 MiB/s", slowRate/mib)
	}
	if told.n.Load() == 0 {
		t.Error("the throttled consumer was never told a throttle time")
	}
	if fastRate < 3*slowRate {
		t.Errorf("unthrottled consumer %.2f MiB/s is not much faster than the throttled one (%.2f)", fastRate/mib, slowRate/mib)
	}
}

// request_percentage holds every request, not only Produce and Fetch: a
// (user, client-id) pair with a tiny share of a thread is told a throttle
// time, at most one window, in Metadata (kproto's encoder) and ListGroups
// (kmsg's) responses.
func TestRequestQuota(t *testing.T) {
	cl := zkafkatest.StartCluster(t, append(quotaWindow, zkafkatest.Topic("t", 1, 1))...)
	ctx := ctxT(t, 2*time.Minute)
	raw, _ := client(t, cl, "admin-raw")
	user, id := "ANONYMOUS", "busy"
	entity := kadm.ClientQuotaEntity{{Type: "user", Name: &user}, {Type: "client-id", Name: &id}}
	setQuota(t, ctx, raw, 1, entity, "request_percentage", 0.001, false)
	busy, _ := client(t, cl, id)
	for _, req := range []kmsg.Request{kmsg.NewPtrMetadataRequest(), kmsg.NewPtrListGroupsRequest()} {
		var throttle int32
		deadline := time.Now().Add(20 * time.Second)
		for n := 0; n < 500 && throttle == 0 && time.Now().Before(deadline); n++ {
			resp, err := busy.Broker(1).Request(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			throttle, _ = resp.(kmsg.ThrottleResponse).Throttle()
		}
		if throttle <= 0 || throttle > 1000 {
			t.Errorf("%T: throttle %d ms, want in (0, 1000]", req, throttle)
		}
	}
	// another client id on the same connection user is not held
	other, _ := client(t, cl, "idle")
	resp, err := other.Broker(1).Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		t.Fatal(err)
	}
	if th, _ := resp.(kmsg.ThrottleResponse).Throttle(); th != 0 {
		t.Errorf("another client id was throttled %d ms", th)
	}
}

// An old producer (Produce v3, before KIP-219) does not back off by
// itself; as in Kafka 3.7 its response comes at once with the throttle
// time and the broker reads nothing more from its connection until the
// time has passed, which holds it to the quota just the same.
func TestProduceQuotaOldClient(t *testing.T) {
	cl := twoBrokers(t)
	ctx := ctxT(t, 3*time.Minute)
	raw, _ := client(t, cl, "admin-raw")
	setQuota(t, ctx, raw, 1, clientEntity("old"), "producer_byte_rate", mib, false)
	old, told := client(t, cl, "old", kgo.MaxBufferedBytes(2*mib), kgo.MaxVersions(kversion.V0_11_0()),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	rate := produceFor(t, ctx, old, "t", 100<<10, 5*time.Second, 2000)
	t.Logf("Produce v3 at a 1 MiB/s quota: %.2f MiB/s, %d throttles", rate/mib, told.n.Load())
	if rate > 2*mib {
		t.Errorf("old producer: %.2f MiB/s, want under 2 MiB/s", rate/mib)
	}
	if told.n.Load() == 0 {
		t.Error("the old producer's responses carried no throttle time")
	}
}
