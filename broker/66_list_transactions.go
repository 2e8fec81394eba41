package broker

import (
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/broker/txn"
	"github.com/zkafka/zkafka/kproto"
)

// ListTransactions (key 66), v0-1, via kmsg.
//
// The transactions this broker coordinates, those the principal may
// DESCRIBE, filtered by state names (unknown names are echoed in
// unknown_state_filters), producer ids and (v1) a minimum running time.
// COORDINATOR_LOAD_IN_PROGRESS while a partition loads. Dead ids are
// never listed (they are forgotten once their tombstone is written).

func init() {
	regKey(kmsg.ListTransactions.Int16(), 0, 1, kmsgHandler(handleListTransactions))
}

func handleListTransactions(c *conn, req *kmsg.ListTransactionsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	states := map[txn.State]bool{}
	for _, name := range req.StateFilters {
		found := false
		for s := txn.Empty; s <= txn.PrepareEpochFence; s++ {
			if s.String() == name {
				states[s], found = true, true
			}
		}
		if !found {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
		}
	}
	if len(req.StateFilters) > 0 && len(states) == 0 {
		return resp, nil
	}
	list, code := c.b.txns.list()
	if code != kproto.CodeNone {
		resp.ErrorCode = int16(code)
		return resp, nil
	}
	nowMs := c.b.now().UnixMilli()
	for id, m := range list {
		switch {
		case len(states) > 0 && !states[m.State]:
		case len(req.ProducerIDFilters) > 0 && !slices.Contains(req.ProducerIDFilters, m.ProducerID):
		case req.Version >= 1 && req.DurationFilterMillis >= 0 && (m.State != txn.Ongoing || nowMs-m.StartMs < req.DurationFilterMillis):
		case !c.allowed(authz.OpDescribe, authz.ResourceTransactionalID, id):
		default:
			st := kmsg.NewListTransactionsResponseTransactionState()
			st.TransactionalID, st.ProducerID, st.TransactionState = id, m.ProducerID, m.State.String()
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
	}
	sort.Slice(resp.TransactionStates, func(i, j int) bool {
		return resp.TransactionStates[i].TransactionalID < resp.TransactionStates[j].TransactionalID
	})
	return resp, nil
}
