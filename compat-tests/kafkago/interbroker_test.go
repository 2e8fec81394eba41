package kafkago

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// The controller's requests (LeaderAndIsr, UpdateMetadata, StopReplica)
// sent by hand with kmsg, as a controller would.

// brokerEpoch is the czxid of a broker's /brokers/ids/{id}.
func brokerEpoch(t testing.TB, e *env) int64 {
	t.Helper()
	_, st, err := e.ZK().Get(e.Path("/brokers/ids/" + strconv.Itoa(int(e.Config.BrokerID))))
	if err != nil {
		t.Fatal(err)
	}
	return st.Czxid
}

// controllerEpoch is /controller_epoch's value.
func controllerEpoch(t testing.TB, e *env) int32 {
	t.Helper()
	data, _, err := e.ZK().Get(e.Path("/controller_epoch"))
	n, perr := strconv.Atoi(string(data))
	if err != nil || perr != nil {
		t.Fatalf("/controller_epoch %q: %v %v", data, err, perr)
	}
	return int32(n)
}

// control sends req to e's broker and returns the response.
func control(t testing.TB, e *env, req kmsg.Request) kmsg.Response {
	t.Helper()
	c := e.Client()
	resp, err := c.SeedBrokers()[0].Request(ctxT(t), req)
	if err != nil {
		t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

func leaderAndISR(controllerEpoch int32, brokerEpoch int64, topic string, leaderEpoch int32) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 1, controllerEpoch, brokerEpoch
	ts := kmsg.NewLeaderAndISRRequestTopicState()
	ts.Topic = topic
	ps := kmsg.NewLeaderAndISRRequestTopicPartition()
	ps.ControllerEpoch, ps.Leader, ps.LeaderEpoch, ps.ISR, ps.Replicas = controllerEpoch, 1, leaderEpoch, []int32{1}, []int32{1}
	ts.PartitionStates = append(ts.PartitionStates, ps)
	req.TopicStates = append(req.TopicStates, ts)
	return req
}

// TestControlRequestEpochs: a broker refuses a controller request whose
// controller epoch is below the newest it has seen
// (STALE_CONTROLLER_EPOCH) or whose broker epoch is below its own
// registration's czxid (STALE_BROKER_EPOCH), for each of the three keys,
// and answers current ones (per partition: UNKNOWN_TOPIC_OR_PARTITION
// for a topic it does not know, STALE_CONTROLLER_EPOCH for an old leader
// epoch). The controller refuses a ControlledShutdown from a broker that
// is not registered or names an old registration.
func TestControlRequestEpochs(t *testing.T) {
	e := startBroker(t)
	ctx := ctxT(t)
	if r, err := kadm.NewClient(e.Client()).CreateTopic(ctx, 1, 1, nil, "ep"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	be := brokerEpoch(t, e)
	ce := controllerEpoch(t, e)
	// The controller's own requests have made ce the newest seen; a
	// request at ce is current.
	lr := control(t, e, leaderAndISR(ce, be, "ep", 0)).(*kmsg.LeaderAndISRResponse)
	if lr.ErrorCode != 0 || len(lr.Topics) != 1 || lr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("current LeaderAndIsr: %+v", lr)
	}
	lr = control(t, e, leaderAndISR(ce, be, "nope", 0)).(*kmsg.LeaderAndISRResponse)
	if lr.ErrorCode != 0 || lr.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("LeaderAndIsr of an unknown topic: %+v", lr)
	}
	lr = control(t, e, leaderAndISR(ce, be, "ep", -5)).(*kmsg.LeaderAndISRResponse)
	if lr.ErrorCode != 0 || lr.Topics[0].Partitions[0].ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Fatalf("LeaderAndIsr with an old leader epoch: %+v", lr)
	}
	for _, tc := range []struct {
		name string
		ce   int32
		be   int64
		want int16
	}{
		{"stale controller epoch", ce - 1, be, kerr.StaleControllerEpoch.Code},
		{"stale broker epoch", ce, be - 1, kerr.StaleBrokerEpoch.Code},
	} {
		if r := control(t, e, leaderAndISR(tc.ce, tc.be, "ep", 0)).(*kmsg.LeaderAndISRResponse); r.ErrorCode != tc.want || len(r.Topics) != 0 {
			t.Errorf("LeaderAndIsr, %s: %+v, want %s", tc.name, r, kerr.ErrorForCode(tc.want))
		}
		um := kmsg.NewPtrUpdateMetadataRequest()
		um.ControllerID, um.ControllerEpoch, um.BrokerEpoch = 1, tc.ce, tc.be
		if r := control(t, e, um).(*kmsg.UpdateMetadataResponse); r.ErrorCode != tc.want {
			t.Errorf("UpdateMetadata, %s: %+v, want %s", tc.name, r, kerr.ErrorForCode(tc.want))
		}
		sr := kmsg.NewPtrStopReplicaRequest()
		sr.ControllerID, sr.ControllerEpoch, sr.BrokerEpoch = 1, tc.ce, tc.be
		st := kmsg.NewStopReplicaRequestTopic()
		st.Topic = "ep"
		sp := kmsg.NewStopReplicaRequestTopicPartitionState()
		sp.Partition, sp.LeaderEpoch, sp.Delete = 0, -2, true
		st.PartitionStates = append(st.PartitionStates, sp)
		sr.Topics = append(sr.Topics, st)
		if r := control(t, e, sr).(*kmsg.StopReplicaResponse); r.ErrorCode != tc.want {
			t.Errorf("StopReplica, %s: %+v, want %s", tc.name, r, kerr.ErrorForCode(tc.want))
		}
	}
	// ControlledShutdown to the controller (this broker): an unknown broker
	// is BROKER_NOT_AVAILABLE, an old registration STALE_BROKER_EPOCH.
	for _, tc := range []struct {
		id   int32
		be   int64
		want int16
	}{{99, be, kerr.BrokerNotAvailable.Code}, {e.Config.BrokerID, be - 1, kerr.StaleBrokerEpoch.Code}} {
		cs := kmsg.NewPtrControlledShutdownRequest()
		cs.BrokerID, cs.BrokerEpoch = tc.id, tc.be
		if r := control(t, e, cs).(*kmsg.ControlledShutdownResponse); r.ErrorCode != tc.want {
			t.Errorf("ControlledShutdown of broker %d epoch %d: %+v, want %s", tc.id, tc.be, r, kerr.ErrorForCode(tc.want))
		}
	}
	// The refused StopReplica deleted nothing: the partition still serves.
	c := e.Client(kgo.DefaultProduceTopic("ep"))
	if err := c.ProduceSync(ctx, kgo.StringRecord("still here")).FirstErr(); err != nil {
		t.Fatalf("produce after refused StopReplica: %v", err)
	}
	// A current StopReplica with delete drops the partition's data.
	dir := filepath.Join(e.Config.LogDirs[0], "ep-0")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("partition directory before StopReplica: %v", err)
	}
	sr := kmsg.NewPtrStopReplicaRequest()
	sr.ControllerID, sr.ControllerEpoch, sr.BrokerEpoch = 1, ce, be
	st := kmsg.NewStopReplicaRequestTopic()
	st.Topic = "ep"
	sp := kmsg.NewStopReplicaRequestTopicPartitionState()
	sp.Partition, sp.LeaderEpoch, sp.Delete = 0, -2, true
	st.PartitionStates = append(st.PartitionStates, sp)
	sr.Topics = append(sr.Topics, st)
	if r := control(t, e, sr).(*kmsg.StopReplicaResponse); r.ErrorCode != 0 || len(r.Partitions) != 1 || r.Partitions[0].ErrorCode != 0 {
		t.Fatalf("StopReplica with delete: %+v", r)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("partition directory after StopReplica with delete: %v", err)
	}
}

// TestControlledShutdownNotController: a broker that is not the
// controller answers ControlledShutdown with NOT_CONTROLLER.
func TestControlledShutdownNotController(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 2)
	cs := kmsg.NewPtrControlledShutdownRequest()
	cs.BrokerID, cs.BrokerEpoch = 1, brokerEpoch(t, cl.Broker(1))
	if r := control(t, cl.Broker(2), cs).(*kmsg.ControlledShutdownResponse); r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("ControlledShutdown to broker 2: %+v, want NOT_CONTROLLER", r)
	}
}
