package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// FindCoordinator (key 10), v0-4, via kmsg.
//
// Group keys (type 0) are answered with the leader of the group's
// partition of __consumer_offsets (coordinatorFor, offsets_topic.go),
// which the first FindCoordinator creates; COORDINATOR_NOT_AVAILABLE
// while it is created or the partition has no leader. Transaction keys
// (type 1) likewise with the leader of the id's partition of
// __transaction_state (txnCoordinatorFor, txn_state_topic.go). Other key
// types are INVALID_REQUEST.
// v4 batches keys (coordinator_keys); v0-3 use the single key.

func init() { regKey(kproto.KeyFindCoordinator, 0, 4, kmsgHandler(handleFindCoordinator)) }

func handleFindCoordinator(c *conn, req *kmsg.FindCoordinatorRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	answer := func(keyType int8, key string) (code int16, id int32, h string, p int32, msg *string) {
		if code := c.coordinatorDenied(keyType, key); code != 0 {
			return code, -1, "", -1, kerrMessage(code)
		}
		var br brokerInfo
		var kc kproto.ErrorCode
		switch keyType {
		case 0:
			br, kc = c.b.coordinatorFor(key)
		case 1:
			br, kc = c.b.txnCoordinatorFor(key)
		default:
			m := "Unknown coordinator type"
			return int16(kproto.CodeInvalidRequest), -1, "", -1, &m
		}
		if kc != kproto.CodeNone {
			return int16(kc), -1, "", -1, kerrMessage(int16(kc))
		}
		host, port := br.at(c.listener)
		return 0, br.id, host, port, nil
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
