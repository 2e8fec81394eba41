// Package controller is the Kafka controller of ZooKeeper mode: the one
// broker that decides every partition's leader and ISR and writes them to
// ZooKeeper. It follows Apache Kafka 3.7's KafkaController and its
// partition state machine (core/src/main/scala/kafka/controller), split
// the way etcd's raft is: Core makes the decisions and does no IO (events
// in, effects out, no clock); Controller is the loop that owns Core, reads
// ZooKeeper for it and carries out its effects: the writes through a
// Store, then the requests to the brokers through Channels.
//
// # Usage
//
//	ch := &controller.ChannelManager{Listener: "PLAINTEXT", Go: goTracked, Done: done, Log: log}
//	c := controller.New(cfg, &controller.ZKStore{ZK: zkc, BrokerID: id}, ch, onChange, log)
//	go c.Run(done)
//	c.TryElect(done)          // at start and whenever /controller vanishes
//	c.BrokersChanged(done)    // the /brokers/ids watch fired
//	c.TopicsChanged(done, ts) // the /brokers/topics watch fired (nil: all topics)
//	c.ControlledShutdown(done, id, epoch) // a broker's ControlledShutdown request
//	c.Resign(done)            // session expired, or /controller names another broker
//	c.AlterPartition(done, r) // a leader's AlterPartition; returns the answer
//
// # Election and fencing
//
// A broker becomes controller by one multi: create the ephemeral
// /controller and set /controller_epoch to epoch+1 at the version it
// read. Either op failing means another broker won. Every later write is
// a multi whose first op checks /controller_epoch at the version the
// election produced; when that check fails (ErrFenced) a newer controller
// exists and this one resigns at once, having written nothing.
//
// # Partition states
//
//	          assignment created               leader's broker dies
//	(none) ──────────────────────► online ───────────────────────────► online, new leader
//	   │   some replica live:        │          (first live ISR member in assignment
//	   │   leader = first live,      │           order; epoch+1; ISR = live members)
//	   │   ISR = live replicas,      │
//	   │   epoch 0                   │ no live ISR member (clean election)
//	   └─ no replica live: stays     ▼
//	                              offline: leader -1, epoch+1, ISR keeps its last member
//	                                 │
//	                                 │ an ISR member returns (or, with
//	                                 │ unclean.leader.election.enable, any replica)
//	                                 ▼
//	                              online, epoch+1
//
// A broker that dies also leaves the ISR of the partitions it follows
// (epoch+1), unless it is the last member; so does one found dead by a
// newly elected controller (the failover read). A broker that registers
// again with a newer epoch (the czxid of /brokers/ids/{id}) bounced: it is
// handled as a death followed by a start.
//
// # Requests to the brokers
//
// After each step's writes land, the loop builds Core's sends as Kafka's
// requests (requests.go: LeaderAndIsr v7, UpdateMetadata v8, StopReplica
// v4, each with controller_id, controller_epoch and the target's broker
// epoch) and queues them. When each kind is sent is in sends.go (Kafka's
// ControllerBrokerRequestBatch): everything after an election; the
// partitions whose state was written (or that are new) to their replicas
// and everyone; everything to a broker that started; the broker list when
// one died; StopReplica with delete for a deleted topic.
//
//	loop ──Enqueue──► queue(broker 2) ──► sender goroutine ──kgo──► broker 2's inter-broker listener
//	     ──Enqueue──► queue(broker 3) ──► sender goroutine ──kgo──► broker 3 ...
//	SetBrokers: a queue per live broker (epoch); a dead or bounced broker's queue is dropped
//
// ChannelManager (channel.go) is Kafka's ControllerChannelManager: one
// queue per live broker, one request in flight, a request that got no
// answer retried (reconnecting) until answered or the queue is dropped.
// Only the loop calls SetBrokers and Enqueue; a resigned controller drops
// every queue.
//
// # Controlled shutdown
//
// shutdown.go: a broker that shuts down asks (ControlledShutdown); Core
// marks it shutting down (never elected again until it dies or
// registers anew), moves each partition it leads to the first live ISR
// member not shutting down (epoch+1, the ISR without the brokers shutting
// down), takes it out of the ISR of the partitions it follows (never the
// last member; StopReplica without delete to it), and answers with the
// partitions it still leads (RF > 1). The broker asks again until none
// remain.
//
// # ISR changes (AlterPartition, KIP-497)
//
// Partition leaders shrink and expand their ISRs through AlterPartition
// (alter.go), decided by Core.AlterPartition as Kafka's ZooKeeper-mode
// controller (processAlterPartition): not the controller: NOT_CONTROLLER;
// an unknown broker or a stale broker epoch: STALE_BROKER_EPOCH; per
// partition, a leader epoch or partition epoch (the state znode's
// zkVersion) newer than the controller's: NOT_CONTROLLER; an older leader
// epoch: FENCED_LEADER_EPOCH; the ISR it already has: the current state
// (idempotent retries); an older partition epoch: INVALID_UPDATE_VERSION;
// a member not live: INELIGIBLE_REPLICA. An accepted change keeps the
// leader and leader epoch; the loop writes each partition in its own
// fenced multi with a CAS on its zkVersion (a failed CAS:
// INVALID_UPDATE_VERSION, and the topic is re-read) and answers with the
// new partition epoch, then sends LeaderAndIsr and UpdateMetadata as for its own writes.
//
// # Operator elections and leader balance
//
// preferred.go: ElectLeaders (KIP-460) PREFERRED moves leadership to the
// first replica of the assignment when it is live and in the ISR (ISR
// unchanged, epoch+1); UNCLEAN elects a partition without a live leader
// as an offline election that may pick a replica outside the ISR.
// Answers per partition: ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
// ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, with Kafka's
// messages. The balance check (RebalanceCheck) is an event the loop steps
// on a ticker (Config.RebalanceInterval, when Config.AutoRebalance): for
// each broker whose share of preferred partitions led elsewhere is above
// Config.ImbalancePercentage, a PREFERRED election of those it can lead.
//
// # Reassignment
//
// reassign.go (KIP-455, Kafka's onPartitionReassignment): RS = TRS + ORS
// with adding_replicas and removing_replicas written to the topic znode in
// the same multi as the state (epoch+1); LeaderAndIsr to every replica of
// RS; after each accepted AlterPartition (and at failover) a move whose
// TRS is in the ISR completes: assignment TRS, ISR without the removed
// replicas, a leader from TRS, epoch+1, in one multi; then StopReplica and
// StopReplica with delete to the removed replicas, and the partition
// leaves /admin/reassign_partitions. Cancel (null target) moves back to
// ORS. The topic znode is written at any version (Kafka's
// setTopicAssignment), fenced by /controller_epoch.
//
// # Topic deletion
//
// deletion.go (Kafka's TopicDeletionManager): DeleteTopics takes the
// topic out of Core's partitions (no more elections; UpdateMetadata with
// leader -2; StopReplica with delete to the live replicas) and waits for
// every replica's answer without error (ChannelManager.Answered →
// StopReplicaAnswered). A replica whose broker is down is asked again when
// the broker registers; when none is pending, the loop deletes the
// topic's znodes (the /admin/delete_topics marker last).
//
// # Invariants
//
//   - Only the loop goroutine touches Core; watches and admin requests
//     reach it as events (Submit'ted read functions run by the loop, so
//     what is read and what is decided from it stay in order).
//   - Every state write is a compare-and-set on the state znode's
//     zkVersion, in a multi that first checks /controller_epoch. A failed
//     CAS makes the loop re-read the topic and decide again.
//   - One write per partition per step; its leader epoch is above every
//     epoch the partition had (a step may skip epochs, never repeat one).
//   - An ISR is never emptied, and a replica outside the ISR never leads
//     unless the topic allows unclean election or an operator asked for
//     an UNCLEAN ElectLeaders.
//   - No broker shutting down is elected.
//   - A request is built after the writes it reports landed; a step whose
//     writes failed sends nothing (the re-read decides again).
//
// # Not yet
//
// Followers replicate, so Config.ISRIsLive is true in the broker: a new
// partition's ISR is every live replica. Of the answers to the
// controller's requests only StopReplica's are used (topic deletion);
// Kafka's controller also marks replicas offline on KAFKA_STORAGE_ERROR.
// A replica whose StopReplica with delete failed on a live broker is
// retried only when that broker registers again (Kafka also retries on
// other events). A replica a reassignment removed while its broker was
// down is deleted when the broker registers again, by this controller
// only (a new controller does not know of it). The
// replication throttles (leader/follower.replication.throttled.rate and
// .replicas) are not applied to the moves. Each /brokers/topics change re-reads every
// topic (Kafka's controller reads only the new ones), and a new topic's
// states are written by the controller broker's CreateTopics in the
// topic's own multi (fenced the same way), not by the loop. A partition
// no replica of which was ever live is in UpdateMetadata with leader -1
// (Kafka leaves it out until it has a leader).
package controller
