package broker

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/controller"
)

// The znodes through which tools older than the admin APIs ask the
// controller for leader elections and reassignments (Kafka's
// PreferredReplicaElectionHandler and PartitionReassignmentHandler): every
// broker watches them, the controller acts.
//
//	/admin/preferred_replica_election  {"version":1,"partitions":[{"topic":…,"partition":…}]}
//	                                   PREFERRED elections of those partitions, then the
//	                                   znode is deleted (fenced by the controller epoch)
//	/admin/reassign_partitions         {"version":1,"partitions":[{"topic":…,"partition":…,"replicas":[…]}]}
//	                                   the moves start; each partition leaves the znode when
//	                                   its move completes or is refused; it goes when empty

const preferredElectionPath = "/admin/preferred_replica_election"

// preferredElectionZNode is /admin/preferred_replica_election.
type preferredElectionZNode struct {
	Version    int `json:"version"`
	Partitions []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
	} `json:"partitions"`
}

// watchAdminZNode calls act (as controller) whenever path exists: at
// start and when it is created or changed (controlChanged acts on it when
// this broker becomes the controller).
func (b *Broker) watchAdminZNode(path string, act func()) {
	for {
		ok, _, ch, err := b.zk.Conn.ExistsW(b.zk.Path(path))
		if err != nil {
			if !b.sleep(time.Second) {
				return
			}
			continue
		}
		if active, _, _ := b.ctrl.get(); ok && active {
			act()
		}
		select {
		case <-ch:
		case <-b.done:
			return
		}
	}
}

// preferredElectionZNodeAsked runs the elections the znode asks for and
// deletes it.
func (b *Broker) preferredElectionZNodeAsked() {
	data, st, err := b.zk.Get(preferredElectionPath)
	if err != nil {
		return
	}
	var z preferredElectionZNode
	req := controller.ElectRequest{Type: controller.ElectPreferred, Partitions: []controller.PartitionID{}}
	if json.Unmarshal(data, &z) == nil {
		for _, p := range z.Partitions {
			req.Partitions = append(req.Partitions, controller.PartitionID{Topic: p.Topic, Partition: p.Partition})
		}
	} else {
		b.log.Warn("ignoring an unreadable znode", "path", preferredElectionPath)
	}
	results, ok := b.ctl.ElectLeaders(b.done, req)
	if !ok {
		return
	}
	for _, r := range results {
		if r.Error != controller.CodeNone && r.Error != controller.CodeElectionNotNeeded {
			b.log.Info("preferred replica election", "topic", r.Partition.Topic, "partition", r.Partition.Partition, "err", r.Message)
		}
	}
	check, _, err := b.epochCheck()
	if err == nil {
		err = b.zk.Multi(check, &zk.DeleteRequest{Path: preferredElectionPath, Version: st.Version})
	}
	if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, errNotController) {
		b.log.Warn("deleting znode", "path", preferredElectionPath, "err", err)
	}
}

// reassignZNodeAsked starts the moves the znode asks for; the refused
// ones leave it at once, the others when they complete (the controller's
// loop takes them out).
func (b *Broker) reassignZNodeAsked() {
	store := &controller.ZKStore{ZK: b.zk, BrokerID: b.cfg.BrokerID}
	moves, err := store.ZKReassignments()
	if err != nil || len(moves) == 0 {
		if err != nil {
			b.log.Warn("reading znode", "path", controller.ReassignPath, "err", err)
		}
		return
	}
	results, ok := b.ctl.AlterReassignments(b.done, moves)
	if !ok {
		return
	}
	var refused []controller.PartitionID
	for _, r := range results {
		if r.Error != controller.CodeNone {
			b.log.Warn("reassignment refused", "topic", r.Partition.Topic, "partition", r.Partition.Partition, "err", r.Message)
			refused = append(refused, r.Partition)
		}
	}
	if _, _, version := b.ctrl.get(); len(refused) > 0 {
		if err := store.ReassignmentsDone(version, refused); err != nil {
			b.log.Warn("updating znode", "path", controller.ReassignPath, "err", err)
		}
	}
}
