package broker

import (
	"encoding/json"
	"errors"
	"strconv"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/kproto"
)

// InitProducerId (key 22), v0-4, via kmsg.
//
// With a transactional id it goes to the id's transaction coordinator
// (initTransactional, txn_init.go); without, the producer is only
// idempotent. Producer ids come from blocks of 1000 reserved in
// /latest_producer_id_block with a versioned write, as Kafka's ZooKeeper
// ProducerIdManager does, so ids are unique across brokers and restarts.
// A request carrying an existing producer id and epoch (v3+, KIP-360) gets
// the same id with the epoch bumped; at the epoch limit a new id.

func init() {
	regKey(kproto.KeyInitProducerID, 0, 4, kmsgHandler(handleInitProducerID))
}

const producerIDBlockSize = 1000

// producerIDs hands out ids from the current block.
type producerIDs struct {
	mu         sync.Mutex
	next, last int64 // next id to give; last id of the block (next > last: none)
}

func handleInitProducerID(c *conn, req *kmsg.InitProducerIDRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		c.initTransactional(req, resp)
		return resp, nil
	}
	if !c.allowedCluster(authz.OpIdempotentWrite) && !c.allowedOnSomeTopic(authz.OpWrite) {
		resp.ErrorCode = int16(kproto.CodeClusterAuthorizationFailed)
		return resp, nil
	}
	if req.ProducerID >= 0 && req.ProducerEpoch >= 0 && req.ProducerEpoch < 32766 {
		resp.ProducerID, resp.ProducerEpoch = req.ProducerID, req.ProducerEpoch+1
		return resp, nil
	}
	id, err := c.b.nextProducerID()
	if err != nil {
		c.log.Warn("allocating a producer id", "err", err)
		resp.ErrorCode = int16(kproto.CodeCoordinatorNotAvailable)
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp, nil
}

// nextProducerID returns a fresh producer id.
func (b *Broker) nextProducerID() (int64, error) {
	b.pids.mu.Lock()
	defer b.pids.mu.Unlock()
	if b.pids.next > b.pids.last || b.pids.last == 0 && b.pids.next == 0 {
		start, err := b.reserveProducerIDBlock()
		if err != nil {
			return -1, err
		}
		b.pids.next, b.pids.last = start, start+producerIDBlockSize-1
	}
	id := b.pids.next
	b.pids.next++
	return id, nil
}

// reserveProducerIDBlock claims the next block in ZooKeeper.
func (b *Broker) reserveProducerIDBlock() (int64, error) {
	for attempt := 0; attempt < 10; attempt++ {
		data, st, err := b.zk.Get("/latest_producer_id_block")
		if err != nil {
			return -1, err
		}
		start := int64(0)
		if len(data) > 0 {
			var z zkmeta.ProducerIDBlockZNode
			if err := json.Unmarshal(data, &z); err != nil {
				return -1, err
			}
			end, err := strconv.ParseInt(z.BlockEnd, 10, 64)
			if err != nil {
				return -1, err
			}
			start = end + 1
		}
		z := zkmeta.ProducerIDBlockZNode{Version: 1, Broker: b.cfg.BrokerID,
			BlockStart: strconv.FormatInt(start, 10), BlockEnd: strconv.FormatInt(start+producerIDBlockSize-1, 10)}
		_, err = b.zk.Set("/latest_producer_id_block", zkmeta.MustJSON(z), st.Version)
		if errors.Is(err, zk.ErrBadVersion) {
			continue
		}
		if err != nil {
			return -1, err
		}
		return start, nil
	}
	return -1, errors.New("too much contention on /latest_producer_id_block")
}
