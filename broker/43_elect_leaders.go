package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/broker/controller"
)

// ElectLeaders (key 43), v0-2, via kmsg (KIP-183, KIP-460): an operator
// asks the controller for PREFERRED (v0's only kind) or UNCLEAN elections
// of the partitions named, or of every partition (topics null). The
// decisions are broker/controller's (preferred.go), made on its loop; the
// handler waits for them. As Kafka: ALTER on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED at the top (v1+) and on every partition; a
// broker that is not the controller answers NOT_CONTROLLER on every
// partition (the client then asks the controller); with topics null the
// partitions that needed no election are left out of the answer.

func init() { regKey(int16(kmsg.ElectLeaders), 0, 2, kmsgHandler(handleElectLeaders)) }

func handleElectLeaders(c *conn, req *kmsg.ElectLeadersRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	ereq := controller.ElectRequest{Type: controller.ElectionType(req.ElectionType)}
	if req.Version == 0 {
		ereq.Type = controller.ElectPreferred
	}
	for _, rt := range req.Topics {
		for _, p := range rt.Partitions {
			ereq.Partitions = append(ereq.Partitions, controller.PartitionID{Topic: rt.Topic, Partition: p})
		}
	}
	var results []controller.PartitionResult
	switch {
	case ereq.Type != controller.ElectPreferred && ereq.Type != controller.ElectUnclean:
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	case !c.allowedCluster(authz.OpAlter):
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		results = everyPartition(ereq.Partitions, kerr.ClusterAuthorizationFailed.Code)
	default:
		var ok bool
		if active, _, _ := c.b.ctrl.get(); active && c.b.ctl != nil {
			results, ok = c.b.ctl.ElectLeaders(c.b.done, ereq)
		}
		if !ok {
			results = everyPartition(ereq.Partitions, kerr.NotController.Code)
		}
	}
	byTopic := map[string]int{}
	for _, r := range results {
		if req.Topics == nil && r.Error == controller.CodeElectionNotNeeded {
			continue
		}
		i, ok := byTopic[r.Partition.Topic]
		if !ok {
			i = len(resp.Topics)
			byTopic[r.Partition.Topic] = i
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = r.Partition.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition, rp.ErrorCode = r.Partition.Partition, r.Error
		if r.Error != 0 {
			msg := r.Message
			if msg == "" {
				msg = kerr.ErrorForCode(r.Error).Error()
			}
			rp.ErrorMessage = &msg
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return resp, nil
}

// everyPartition answers each partition asked for with code.
func everyPartition(ids []controller.PartitionID, code int16) []controller.PartitionResult {
	out := make([]controller.PartitionResult, 0, len(ids))
	for _, id := range ids {
		out = append(out, controller.PartitionResult{Partition: id, Error: code})
	}
	return out
}
