package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/broker/txn"
	"github.com/zkafka/zkafka/kproto"
)

// TxnOffsetCommit (key 28), v0-3, via kmsg.
//
// Served by the group's coordinator: the offsets are kept pending in
// ZooKeeper (txn_offsets.go) until the transaction's marker reaches the
// group's partition of __consumer_offsets. As Kafka 3.7 (KIP-890 part 1)
// the coordinator first verifies with the transaction coordinator that
// the group's partition is in the producer's transaction
// (AddOffsetsToTxn came first): INVALID_TXN_STATE if not. WRITE on the
// transactional id, READ on the group and on each topic; v3+ checks the
// member and generation as Kafka's doTxnCommitOffsets (a member id or a
// generation of -1 / "" is not checked).

func init() { regKey(kmsg.TxnOffsetCommit.Int16(), 0, 3, kmsgHandler(handleTxnOffsetCommit)) }

func handleTxnOffsetCommit(c *conn, req *kmsg.TxnOffsetCommitRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	codes := make([][]kproto.ErrorCode, len(req.Topics))
	for i, t := range req.Topics {
		codes[i] = make([]kproto.ErrorCode, len(t.Partitions))
	}
	setAll := func(code kproto.ErrorCode) {
		for i := range codes {
			for j := range codes[i] {
				if codes[i][j] == kproto.CodeNone {
					codes[i][j] = code
				}
			}
		}
	}
	c.txnOffsetCommit(req, codes, setAll)
	for i, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for j, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, int16(fencedCode(codes[i][j], req.Version, 3))
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (c *conn) txnOffsetCommit(req *kmsg.TxnOffsetCommitRequest, codes [][]kproto.ErrorCode, setAll func(kproto.ErrorCode)) {
	b := c.b
	switch {
	case req.TransactionalID == "" || req.Group == "":
		setAll(kproto.CodeInvalidRequest)
		return
	case !c.allowed(authz.OpWrite, authz.ResourceTransactionalID, req.TransactionalID):
		setAll(codeTransactionalIDAuthorizationFailed)
		return
	case !c.allowedGroup(authz.OpRead, req.Group):
		setAll(kproto.CodeGroupAuthorizationFailed)
		return
	}
	maxMeta := int(b.groups.cfg.OffsetMetadataMaxBytes)
	var offs []txnOffsetZEntry
	for i, t := range req.Topics {
		tp := b.cluster.topic(t.Topic)
		for j, p := range t.Partitions {
			var meta string
			if p.Metadata != nil {
				meta = *p.Metadata
			}
			switch {
			case !c.allowedTopic(authz.OpRead, t.Topic):
				codes[i][j] = kproto.CodeTopicAuthorizationFailed
			case tp == nil || p.Partition < 0 || int(p.Partition) >= len(tp.replicas):
				codes[i][j] = kproto.CodeUnknownTopicOrPartition
			case len(meta) > maxMeta:
				codes[i][j] = codeOffsetMetadataTooLarge
			default:
				epoch := p.LeaderEpoch
				if req.Version < 2 {
					epoch = -1
				}
				offs = append(offs, txnOffsetZEntry{Topic: t.Topic, Partition: p.Partition, Offset: p.Offset, LeaderEpoch: epoch, Metadata: meta})
			}
		}
	}
	if len(offs) == 0 {
		return
	}
	g, gcode := b.groups.lookup(req.Group, true)
	if gcode != 0 || g == nil {
		setAll(kproto.ErrorCode(gcode))
		return
	}
	if code := g.txnCommitMemberCode(req); code != kproto.CodeNone {
		setAll(code)
		return
	}
	n := len(b.cluster.topic(offsetsTopic).replicas)
	offsetsTP := txn.TopicPartition{Topic: offsetsTopic, Partition: offsetsPartitionOf(req.Group, n)}
	if code := b.verifyTxnPartition(req.TransactionalID, req.ProducerID, req.ProducerEpoch, offsetsTP); code != kproto.CodeNone {
		setAll(code)
		return
	}
	if err := b.putTxnOffsets(req.Group, req.ProducerID, req.ProducerEpoch, offs); err != nil {
		c.log.Warn("storing transactional offsets in ZooKeeper", "group", req.Group, "err", err)
		setAll(kproto.CodeCoordinatorNotAvailable)
	}
}

// txnCommitMemberCode is Kafka's check of a TxnOffsetCommit's member,
// instance and generation (GroupCoordinator.doTxnCommitOffsets).
func (g *group) txnCommitMemberCode(req *kmsg.TxnOffsetCommitRequest) kproto.ErrorCode {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.state == groupDead:
		return kproto.CodeCoordinatorNotAvailable
	case req.InstanceID != nil && *req.InstanceID != "" && g.static[*req.InstanceID] != "" && g.static[*req.InstanceID] != req.MemberID:
		return kproto.CodeFencedInstanceID
	case req.MemberID != "" && g.members[req.MemberID] == nil:
		return kproto.CodeUnknownMemberID
	case req.Generation >= 0 && req.Generation != g.generation:
		return kproto.CodeIllegalGeneration
	}
	return kproto.CodeNone
}

// verifyTxnPartition asks id's transaction coordinator whether tp is in
// the producer's ongoing transaction: at once when it is this broker,
// else with AddPartitionsToTxn v4 verify_only. NONE when it is.
func (b *Broker) verifyTxnPartition(id string, pid int64, epoch int16, tp txn.TopicPartition) kproto.ErrorCode {
	code, each := b.txns.verify(id, pid, epoch, []txn.TopicPartition{tp})
	if code == kproto.CodeNotCoordinator {
		code = b.verifyRemote(id, pid, epoch, tp)
	} else if code == kproto.CodeNone {
		code = each[0]
	}
	switch code {
	case kproto.CodeNotCoordinator, kproto.CodeCoordinatorLoadInProgress, kproto.CodeConcurrentTransactions:
		// The transaction coordinator's own state: retriable for the
		// client, which finds the group's coordinator again.
		return kproto.CodeCoordinatorNotAvailable
	}
	return code
}

// verifyRemote is verifyTxnPartition's question to another broker, sent
// by the partition leaders' verifier (txn_partition_verify.go).
func (b *Broker) verifyRemote(id string, pid int64, epoch int16, tp txn.TopicPartition) kproto.ErrorCode {
	codes, ok := b.askTxnCoordinator(id, pid, epoch, map[string][]int32{tp.Topic: {tp.Partition}})
	if !ok {
		return kproto.CodeCoordinatorNotAvailable
	}
	if code, ok := codes[tp.Topic][tp.Partition]; ok {
		return code
	}
	return kproto.CodeInvalidTxnState
}
