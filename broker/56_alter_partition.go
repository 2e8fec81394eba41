package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/controller"
	"github.com/zkafka/zkafka/kproto"
)

// AlterPartition (key 56), v0-3, via kmsg: a partition leader asks the
// controller to change its ISR (KIP-497). Topics by name (v0-1) or id
// (v2+); v3's new_isr_with_epochs is read for its broker ids (the broker
// epochs in it are not checked, as in Kafka's ZooKeeper mode). The
// decisions are broker/controller's (alter.go), made on its loop; the
// handler waits for them. A broker that is not the controller answers
// NOT_CONTROLLER; the broker epoch must be the sender's live
// registration's czxid, else STALE_BROKER_EPOCH (-1 included, as Kafka). The sender side, on partition leaders, is alter_partition.go.

const keyAlterPartition int16 = 56

func init() { regKey(keyAlterPartition, 0, 3, kmsgHandler(handleAlterPartition)) }

func handleAlterPartition(c *conn, req *kmsg.AlterPartitionRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	if active, _, _ := c.b.ctrl.get(); !active {
		resp.ErrorCode = int16(kproto.CodeNotController)
		return resp, nil
	}
	areq := controller.AlterRequest{Broker: req.BrokerID, BrokerEpoch: req.BrokerEpoch}
	ids := map[string][16]byte{} // the answer names topics as the request did
	for _, rt := range req.Topics {
		name := rt.Topic
		if req.Version >= 2 {
			name = "\x00unknown topic id " + string(rt.TopicID[:]) // no topic has it: UNKNOWN_TOPIC_OR_PARTITION
			if t := c.b.cluster.topicByID(rt.TopicID); t != nil {
				name = t.name
			}
			ids[name] = rt.TopicID
		}
		for _, rp := range rt.Partitions {
			isr := rp.NewISR
			if req.Version >= 3 {
				isr = nil
				for _, e := range rp.NewEpochISR {
					isr = append(isr, e.BrokerID)
				}
			}
			areq.Partitions = append(areq.Partitions, controller.AlterISR{Partition: controller.PartitionID{Topic: name, Partition: rp.Partition},
				LeaderEpoch: rp.LeaderEpoch, ISR: isr, PartitionEpoch: rp.PartitionEpoch})
		}
	}
	ans := c.b.ctl.AlterPartition(c.b.done, areq)
	resp.ErrorCode = ans.Error
	if ans.Error != controller.CodeNone {
		return resp, nil
	}
	byTopic := map[string]int{}
	for _, r := range ans.Results {
		i, ok := byTopic[r.Partition.Topic]
		if !ok {
			i = len(resp.Topics)
			byTopic[r.Partition.Topic] = i
			rt := kmsg.NewAlterPartitionResponseTopic()
			rt.Topic = r.Partition.Topic
			rt.TopidID = ids[r.Partition.Topic] // sic: kmsg spells it so
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewAlterPartitionResponseTopicPartition()
		rp.Partition, rp.ErrorCode = r.Partition.Partition, r.Error
		if r.Error == controller.CodeNone {
			rp.LeaderID, rp.LeaderEpoch, rp.ISR, rp.PartitionEpoch = r.State.Leader, r.State.LeaderEpoch, r.State.ISR, r.PartitionEpoch
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return resp, nil
}
