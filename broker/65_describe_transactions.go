package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// DescribeTransactions (key 65), v0, via kmsg.
//
// Each id is described by its coordinator (NOT_COORDINATOR elsewhere,
// COORDINATOR_LOAD_IN_PROGRESS while its partition loads):
// TRANSACTIONAL_ID_NOT_FOUND when unknown, else its state, timeout,
// start, producer id and epoch and partitions. DESCRIBE on the id.

func init() {
	regKey(kmsg.DescribeTransactions.Int16(), 0, 0, kmsgHandler(handleDescribeTransactions))
}

const codeTransactionalIDNotFound kproto.ErrorCode = 105

func handleDescribeTransactions(c *conn, req *kmsg.DescribeTransactionsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.ProducerEpoch, st.StartTimestamp = id, -1, -1, -1
		if !c.allowed(authz.OpDescribe, authz.ResourceTransactionalID, id) {
			st.ErrorCode = int16(codeTransactionalIDAuthorizationFailed)
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		m, code := c.b.txns.describe(id)
		st.ErrorCode = int16(code)
		if code == kproto.CodeNone {
			st.State, st.TimeoutMillis, st.StartTimestamp = m.State.String(), m.TimeoutMs, m.StartMs
			st.ProducerID, st.ProducerEpoch = m.ProducerID, m.ProducerEpoch
			for _, p := range m.Partitions {
				if n := len(st.Topics); n == 0 || st.Topics[n-1].Topic != p.Topic {
					t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
					t.Topic = p.Topic
					st.Topics = append(st.Topics, t)
				}
				last := &st.Topics[len(st.Topics)-1]
				last.Partitions = append(last.Partitions, p.Partition)
			}
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp, nil
}
