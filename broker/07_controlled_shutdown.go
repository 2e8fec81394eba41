package broker

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/controller"
)

// ControlledShutdown (key 7), v3 only, via kmsg: a broker about to stop
// asks the controller to move leadership off it (controller/shutdown.go);
// the answer lists the partitions it still leads. A broker that is not
// the controller answers NOT_CONTROLLER; the controller refuses an
// unregistered broker (BROKER_NOT_AVAILABLE) and a broker epoch older
// than its registration (STALE_BROKER_EPOCH), as Kafka. The broker's side
// is shutdown_controlled.go.

func init() { regKey(int16(kmsg.ControlledShutdown), 3, 3, kmsgHandler(handleControlledShutdown)) }

func handleControlledShutdown(c *conn, req *kmsg.ControlledShutdownRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ControlledShutdownResponse)
	if c.clusterActionDenied() {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	b := c.b
	if active, _, _ := b.ctrl.get(); !active || b.ctl == nil {
		resp.ErrorCode = kerr.NotController.Code
		return resp, nil
	}
	remaining, err := b.ctl.ControlledShutdown(b.done, req.BrokerID, req.BrokerEpoch)
	switch {
	case errors.Is(err, controller.ErrBrokerNotAvailable):
		resp.ErrorCode = kerr.BrokerNotAvailable.Code
	case errors.Is(err, controller.ErrStaleBrokerEpoch):
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
	case err != nil:
		resp.ErrorCode = kerr.NotController.Code
	}
	for _, p := range remaining {
		rp := kmsg.NewControlledShutdownResponsePartitionsRemaining()
		rp.Topic, rp.Partition = p.Topic, p.Partition
		resp.PartitionsRemaining = append(resp.PartitionsRemaining, rp)
	}
	b.log.Info("controlled shutdown request", "from", req.BrokerID, "remaining", len(remaining), "err", err)
	return resp, nil
}
