package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// FindCoordinator (key 10), v0-4, via kmsg.
//
// Group keys (type 0) are answered with this broker: every broker may
// coordinate any group, since group state (committed offsets) is kept in
// ZooKeeper. The group coordinator itself is a later issue: until then
// the group APIs answer with errors (groups.go). Transaction keys (type 1)
// get COORDINATOR_NOT_AVAILABLE: there is no transaction coordinator.
// v4 batches keys (coordinator_keys); v0-3 use the single key.

func init() { regKey(kproto.KeyFindCoordinator, 0, 4, kmsgHandler(handleFindCoordinator)) }

func handleFindCoordinator(c *conn, req *kmsg.FindCoordinatorRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	host, port := c.b.selfEndpoint()
	answer := func(keyType int8) (code int16, id int32, h string, p int32, msg *string) {
		if keyType != 0 {
			m := "transactions are not supported"
			return int16(kproto.CodeCoordinatorNotAvailable), -1, "", -1, &m
		}
		return 0, c.b.cfg.BrokerID, host, port, nil
	}
	if req.Version >= 4 {
		for _, key := range req.CoordinatorKeys {
			rc := kmsg.NewFindCoordinatorResponseCoordinator()
			rc.Key = key
			rc.ErrorCode, rc.NodeID, rc.Host, rc.Port, rc.ErrorMessage = answer(req.CoordinatorType)
			resp.Coordinators = append(resp.Coordinators, rc)
		}
		return resp, nil
	}
	resp.ErrorCode, resp.NodeID, resp.Host, resp.Port, resp.ErrorMessage = answer(req.CoordinatorType)
	return resp, nil
}

// selfEndpoint is this broker's advertised host and port, from the cache
// of /brokers/ids.
func (b *Broker) selfEndpoint() (string, int32) {
	b.cluster.mu.RLock()
	defer b.cluster.mu.RUnlock()
	br := b.cluster.brokers[b.cfg.BrokerID]
	return br.host, br.port
}
