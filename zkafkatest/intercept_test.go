package zkafkatest_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/zkafkatest"
	"github.com/zkafka/zkafka/zkproto"
)

// TestInjectedNotLeaderRetried: franz-go retries a produce answered twice
// with NOT_LEADER_OR_FOLLOWER, and its record lands once: the answered
// requests had no effect.
func TestInjectedNotLeaderRetried(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Topic("t", 1, 1))
	hook := cl.InterceptKafka(zkafkatest.KafkaRule{Keys: []int16{kmsg.Produce.Int16()}, Count: 2,
		ErrorCode: kerr.NotLeaderForPartition.Code})
	produce(t, client(t, cl), "t", "once")
	if hook.Hits() != 2 {
		t.Fatalf("the rule acted on %d produce requests, want 2", hook.Hits())
	}
	if got := consume(t, cl, "t", 1); !slices.Equal(got, []string{"once"}) {
		t.Fatalf("consumed %v", got)
	}
	ends, err := kadm.NewClient(client(t, cl)).ListEndOffsets(ctx(t, 10*time.Second), "t")
	must(t, err)
	if o, _ := ends.Lookup("t", 0); o.Offset != 1 {
		t.Fatalf("end offset %d, want 1: the record landed more than once", o.Offset)
	}
}

// TestInterceptDropAndDelay: a dropped connection is retried by the
// client; a delayed request is answered no sooner than its delay.
func TestInterceptDropAndDelay(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Topic("t", 1, 1))
	c := client(t, cl)
	adm := kadm.NewClient(c)
	_, err := adm.ListEndOffsets(ctx(t, 10*time.Second), "t") // metadata in place
	must(t, err)
	drop := cl.InterceptKafka(zkafkatest.KafkaRule{Keys: []int16{kmsg.ListOffsets.Int16()}, Count: 1, Drop: true})
	_, err = adm.ListEndOffsets(ctx(t, 10*time.Second), "t")
	must(t, err)
	if drop.Hits() != 1 {
		t.Fatalf("drop rule hits %d", drop.Hits())
	}
	const delay = 700 * time.Millisecond
	slow := cl.InterceptKafka(zkafkatest.KafkaRule{Keys: []int16{kmsg.ListOffsets.Int16()}, Delay: delay})
	start := time.Now()
	_, err = adm.ListEndOffsets(ctx(t, 10*time.Second), "t")
	must(t, err)
	if took := time.Since(start); took < delay || slow.Hits() != 1 {
		t.Fatalf("a delayed ListOffsets took %v (hits %d), want at least %v", took, slow.Hits(), delay)
	}
	slow.Remove()
	_, err = adm.ListEndOffsets(ctx(t, 10*time.Second), "t")
	must(t, err)
	if slow.Hits() != 1 {
		t.Fatalf("a removed rule acted: hits %d", slow.Hits())
	}
}

// TestInterceptZooKeeper: a go-zookeeper getData answered with NoNode
// once, then served; a dropped ping costs the client its connection,
// not its session.
func TestInterceptZooKeeper(t *testing.T) {
	cl := zkafkatest.StartZooKeeper(t)
	conn, events := zkSession(t, cl, 10*time.Second)
	_, err := conn.Create("/x", []byte("v"), 0, worldACL)
	must(t, err)
	cl.InterceptZooKeeper(zkafkatest.ZooKeeperRule{Ops: []int32{int32(zkproto.OpGetData)}, Count: 1,
		ErrorCode: int32(zkproto.ErrNoNode)})
	if _, _, err := conn.Get("/x"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("first get: %v, want the injected NoNode", err)
	}
	data, _, err := conn.Get("/x")
	must(t, err)
	if string(data) != "v" {
		t.Fatalf("second get: %q", data)
	}
	const delay = 500 * time.Millisecond
	slow := cl.InterceptZooKeeper(zkafkatest.ZooKeeperRule{Ops: []int32{int32(zkproto.OpExists)}, Delay: delay,
		Sessions: []int64{conn.SessionID()}})
	start := time.Now()
	if ok, _, err := conn.Exists("/x"); err != nil || !ok {
		t.Fatalf("delayed exists: %v %v", ok, err)
	}
	if took := time.Since(start); took < delay || slow.Hits() != 1 {
		t.Fatalf("a delayed exists took %v (hits %d), want at least %v", took, slow.Hits(), delay)
	}
	slow.Remove()
	sid := conn.SessionID()
	cl.InterceptZooKeeper(zkafkatest.ZooKeeperRule{Ops: []int32{int32(zkproto.OpPing)}, Count: 1, Drop: true})
	waitState(t, events, zk.StateDisconnected)
	waitState(t, events, zk.StateHasSession)
	if conn.SessionID() != sid {
		t.Fatalf("session 0x%x became 0x%x", sid, conn.SessionID())
	}
}

// TestExpireSession: an expired session's client sees StateExpired and
// its ephemerals are gone for everyone.
func TestExpireSession(t *testing.T) {
	cl := zkafkatest.StartZooKeeper(t, zkafkatest.Ensemble(3))
	victim, events := zkSession(t, cl, 10*time.Second)
	_, err := victim.Create("/eph", nil, zk.FlagEphemeral, worldACL)
	must(t, err)
	watcher, _ := zkSession(t, cl, 10*time.Second)
	ok, _, gone, err := watcher.ExistsW("/eph")
	must(t, err)
	if !ok {
		t.Fatal("/eph missing before the expiry")
	}
	must(t, cl.ExpireSession(victim.SessionID()))
	waitState(t, events, zk.StateExpired)
	select {
	case ev := <-gone:
		if ev.Type != zk.EventNodeDeleted {
			t.Fatalf("watch on /eph: %v", ev)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("/eph not deleted within 30 s of the expiry")
	}
	if err := cl.ExpireSession(0x7777); err == nil {
		t.Fatal("expiring a session that does not exist succeeded")
	}
}

// TestInterceptAcksZero: an acks=0 produce answered with an error closes
// its connection (the client reads no response; Kafka does the same) and
// has no effect; the next one lands.
func TestInterceptAcksZero(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Topic("t", 1, 1))
	hook := cl.InterceptKafka(zkafkatest.KafkaRule{Keys: []int16{kmsg.Produce.Int16()}, Count: 1,
		ErrorCode: kerr.NotLeaderForPartition.Code})
	c := client(t, cl, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	produce(t, c, "t", "lost")
	must(t, poll(t, 10*time.Second, func() error {
		if hook.Hits() != 1 {
			return errf("hits %d", hook.Hits())
		}
		return nil
	}))
	produce(t, c, "t", "kept")
	if got := consume(t, cl, "t", 1); !slices.Equal(got, []string{"kept"}) {
		t.Fatalf("consumed %v", got)
	}
	ends, err := kadm.NewClient(client(t, cl)).ListEndOffsets(ctx(t, 10*time.Second), "t")
	must(t, err)
	if o, _ := ends.Lookup("t", 0); o.Offset != 1 {
		t.Fatalf("end offset %d, want 1", o.Offset)
	}
}

// TestInterceptRespond: a Go rule answers with a response of its own.
func TestInterceptRespond(t *testing.T) {
	cl := zkafkatest.StartCluster(t)
	cl.InterceptKafka(zkafkatest.KafkaRule{Keys: []int16{kmsg.ListGroups.Int16()}, Respond: func(req kmsg.Request) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
		g := kmsg.NewListGroupsResponseGroup()
		g.Group, g.ProtocolType = "invented", "consumer"
		resp.Groups = append(resp.Groups, g)
		return resp
	}})
	groups, err := kadm.NewClient(client(t, cl)).ListGroups(context.Background())
	must(t, err)
	if names := groups.Groups(); !slices.Equal(names, []string{"invented"}) {
		t.Fatalf("groups %v", names)
	}
}

// TestInterceptAcksZeroClosesConnection: on the wire, an acks=0 produce
// answered with an error gets no response (its client reads none): the
// connection closes before the next request is answered.
func TestInterceptAcksZeroClosesConnection(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Topic("t", 1, 1))
	cl.InterceptKafka(zkafkatest.KafkaRule{Keys: []int16{kmsg.Produce.Int16()}, ErrorCode: kerr.NotLeaderForPartition.Code})
	conn, err := net.Dial("tcp", cl.Seeds()[0])
	must(t, err)
	defer conn.Close()
	produce := kmsg.NewPtrProduceRequest()
	produce.Version, produce.Acks, produce.TimeoutMillis = 3, 0, 1000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "t"
	pt.Partitions = append(pt.Partitions, kmsg.NewProduceRequestTopicPartition())
	produce.Topics = append(produce.Topics, pt)
	versions := kmsg.NewPtrApiVersionsRequest() // v0: no flexible header
	var frames []byte
	for i, req := range []kmsg.Request{produce, versions} {
		frames = appendRequest(frames, req, int32(i+1))
	}
	_, err = conn.Write(frames)
	must(t, err)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [8]byte
	if n, err := io.ReadFull(conn, size[:]); err == nil {
		t.Fatalf("read a response (size %d, correlation id %d), want the connection closed",
			binary.BigEndian.Uint32(size[:4]), binary.BigEndian.Uint32(size[4:]))
	} else if n != 0 || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %d bytes, %v: want the connection closed", n, err)
	}
}

// appendRequest appends req as a non-flexible request frame.
func appendRequest(dst []byte, req kmsg.Request, correlationID int32) []byte {
	body := req.AppendTo(nil)
	hdr := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	hdr = binary.BigEndian.AppendUint16(hdr, uint16(req.GetVersion()))
	hdr = binary.BigEndian.AppendUint32(hdr, uint32(correlationID))
	hdr = binary.BigEndian.AppendUint16(hdr, 0) // client.id ""
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(hdr)+len(body)))
	return append(append(dst, hdr...), body...)
}
