package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// FindCoordinator (key 10), v0-4, via kmsg.
//
// Group keys (type 0) are answered with the live broker the group id
// hashes to (coordinatorFor, group_coordinator.go); group state is in
// ZooKeeper, so any broker can take a group over. Transaction keys (type 1)
// get COORDINATOR_NOT_AVAILABLE: there is no transaction coordinator.
// v4 batches keys (coordinator_keys); v0-3 use the single key.

func init() { regKey(kproto.KeyFindCoordinator, 0, 4, kmsgHandler(handleFindCoordinator)) }

func handleFindCoordinator(c *conn, req *kmsg.FindCoordinatorRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	host, port := c.b.selfEndpoint(c.listener)
	answer := func(keyType int8, key string) (code int16, id int32, h string, p int32, msg *string) {
		if code := c.coordinatorDenied(keyType, key); code != 0 {
			return code, -1, "", -1, kerrMessage(code)
		}
		if keyType != 0 {
			m := "transactions are not supported"
			return int16(kproto.CodeCoordinatorNotAvailable), -1, "", -1, &m
		}
		if br, _, ok := c.b.coordinatorFor(key); ok {
			h, p := br.at(c.listener)
			return 0, br.id, h, p, nil
		}
		return 0, c.b.cfg.BrokerID, host, port, nil
	}
	if req.Version >= 4 {
		for _, key := range req.CoordinatorKeys {
			rc := kmsg.NewFindCoordinatorResponseCoordinator()
			rc.Key = key
			rc.ErrorCode, rc.NodeID, rc.Host, rc.Port, rc.ErrorMessage = answer(req.CoordinatorType, key)
			resp.Coordinators = append(resp.Coordinators, rc)
		}
		return resp, nil
	}
	resp.ErrorCode, resp.NodeID, resp.Host, resp.Port, resp.ErrorMessage = answer(req.CoordinatorType, req.CoordinatorKey)
	return resp, nil
}

// selfEndpoint is this broker's advertised host and port on listener,
// from the cache of /brokers/ids.
func (b *Broker) selfEndpoint(listener string) (string, int32) {
	b.cluster.mu.RLock()
	defer b.cluster.mu.RUnlock()
	return b.cluster.brokers[b.cfg.BrokerID].at(listener)
}
