package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// TestVerifierBatchesPerCoordinator drives the verifier against a fake
// coordinator (kfake, answering AddPartitionsToTxn by hand: partition 0
// in the transaction, 1 not): the verifications that wait while one is in
// flight go together in the next request, one transaction per
// transactional id, and each ask gets its own transaction's codes.
func TestVerifierBatchesPerCoordinator(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	got := make(chan *kmsg.AddPartitionsToTxnRequest, 8)
	release := make(chan struct{})
	first := true
	fake.ControlKey(int16(kmsg.AddPartitionsToTxn), func(r kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		req := r.(*kmsg.AddPartitionsToTxnRequest)
		got <- req
		if first {
			first = false
			<-release
		}
		resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
		for _, tx := range req.Transactions {
			rtx := kmsg.NewAddPartitionsToTxnResponseTransaction()
			rtx.TransactionalID = tx.TransactionalID
			for _, tt := range tx.Topics {
				rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
				rt.Topic = tt.Topic
				for _, p := range tt.Partitions {
					rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
					rp.Partition = p
					if p == 1 || !tx.VerifyOnly {
						rp.ErrorCode = int16(kproto.CodeInvalidTxnState)
					}
					rt.Partitions = append(rt.Partitions, rp)
				}
				rtx.Topics = append(rtx.Topics, rt)
			}
			resp.Transactions = append(resp.Transactions, rtx)
		}
		return resp, nil, true
	})
	b, _ := newTestBroker(t)
	defer b.txnVerify.close()
	addr := fake.ListenAddrs()[0]
	ask := func(id string, parts ...int32) *verifyAsk {
		a := newVerifyAsk(id, 1, 0, map[string][]int32{"t": parts})
		if !b.txnVerify.enqueue(b, addr, a) {
			t.Fatal("enqueue refused")
		}
		return a
	}
	wait := func(what string) *kmsg.AddPartitionsToTxnRequest {
		t.Helper()
		select {
		case r := <-got:
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("no request for %s", what)
			return nil
		}
	}
	a1 := ask("a", 0)
	if r := wait("a"); len(r.Transactions) != 1 || r.Version < 4 {
		t.Fatalf("first request: v%d, %d transactions", r.Version, len(r.Transactions))
	}
	b1, c1, a2 := ask("b", 0, 1), ask("c", 1), ask("a", 1)
	a3 := ask("a", 0) // a second ask for "a" while one waits: the request after
	close(release)
	r2, r3 := wait("b, c, a"), wait("a again")
	ids := func(r *kmsg.AddPartitionsToTxnRequest) (out []string) {
		for _, tx := range r.Transactions {
			out = append(out, tx.TransactionalID)
		}
		return out
	}
	if len(r2.Transactions) != 3 || len(r3.Transactions) != 1 || r3.Transactions[0].TransactionalID != "a" {
		t.Fatalf("requests after the first: %v then %v; want b, c, a together, then a", ids(r2), ids(r3))
	}
	for _, tc := range []struct {
		a    *verifyAsk
		want map[int32]kproto.ErrorCode
	}{
		{a1, map[int32]kproto.ErrorCode{0: kproto.CodeNone}},
		{b1, map[int32]kproto.ErrorCode{0: kproto.CodeNone, 1: kproto.CodeInvalidTxnState}},
		{c1, map[int32]kproto.ErrorCode{1: kproto.CodeInvalidTxnState}},
		{a2, map[int32]kproto.ErrorCode{1: kproto.CodeInvalidTxnState}},
		{a3, map[int32]kproto.ErrorCode{0: kproto.CodeNone}},
	} {
		codes := <-tc.a.done
		for p, want := range tc.want {
			if codes["t"][p] != want {
				t.Errorf("%s partition %d: %v, want %v", tc.a.tx.TransactionalID, p, codes["t"][p], want)
			}
		}
	}
}
