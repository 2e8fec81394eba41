package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/broker/controller"
)

// AlterPartitionReassignments (key 45) v0 and ListPartitionReassignments
// (key 46) v0, via kmsg (KIP-455): an operator moves partitions to new
// replicas (null replicas: cancel the move) and lists the moves in
// progress. The decisions and the move itself are broker/controller's
// (reassign.go), on its loop. As Kafka's ZooKeeper mode: ALTER (45) or
// DESCRIBE (46) on the cluster, else CLUSTER_AUTHORIZATION_FAILED; a
// broker that is not the controller answers NOT_CONTROLLER at the top
// (the client then asks the controller); per partition
// UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT and
// NO_REASSIGNMENT_IN_PROGRESS with Kafka's messages. The replication
// throttles (throttle.go) slow the new replicas' catching up as in Kafka.

func init() {
	regKey(int16(kmsg.AlterPartitionAssignments), 0, 0, kmsgHandler(handleAlterReassignments))
	regKey(int16(kmsg.ListPartitionReassignments), 0, 0, kmsgHandler(handleListReassignments))
}

func handleAlterReassignments(c *conn, req *kmsg.AlterPartitionAssignmentsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	if !c.allowedCluster(authz.OpAlter) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	var reqs []controller.Reassign
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			reqs = append(reqs, controller.Reassign{Partition: controller.PartitionID{Topic: rt.Topic, Partition: rp.Partition}, Target: rp.Replicas})
		}
	}
	var results []controller.PartitionResult
	ok := false
	if active, _, _ := c.b.ctrl.get(); active && c.b.ctl != nil {
		results, ok = c.b.ctl.AlterReassignments(c.b.done, reqs)
	}
	if !ok {
		resp.ErrorCode = kerr.NotController.Code
		return resp, nil
	}
	byTopic := map[string]int{}
	for _, r := range results {
		i, seen := byTopic[r.Partition.Topic]
		if !seen {
			i = len(resp.Topics)
			byTopic[r.Partition.Topic] = i
			rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
			rt.Topic = r.Partition.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
		rp.Partition, rp.ErrorCode = r.Partition.Partition, r.Error
		if r.Error != 0 {
			msg := r.Message
			rp.ErrorMessage = &msg
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return resp, nil
}

func handleListReassignments(c *conn, req *kmsg.ListPartitionReassignmentsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	if !c.allowedCluster(authz.OpDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	var ids []controller.PartitionID // nil: all
	if req.Topics != nil {
		ids = []controller.PartitionID{}
		for _, rt := range req.Topics {
			for _, p := range rt.Partitions {
				ids = append(ids, controller.PartitionID{Topic: rt.Topic, Partition: p})
			}
		}
	}
	var moves []controller.Reassignment
	ok := false
	if active, _, _ := c.b.ctrl.get(); active && c.b.ctl != nil {
		moves, ok = c.b.ctl.ListReassignments(c.b.done, ids)
	}
	if !ok {
		resp.ErrorCode = kerr.NotController.Code
		return resp, nil
	}
	for _, m := range moves {
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != m.Partition.Topic {
			rt := kmsg.NewListPartitionReassignmentsResponseTopic()
			rt.Topic = m.Partition.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		rp.Partition, rp.Replicas, rp.AddingReplicas, rp.RemovingReplicas = m.Partition.Partition, m.Replicas, nonNilIDs(m.Adding), nonNilIDs(m.Removing)
		rt := &resp.Topics[len(resp.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	return resp, nil
}
