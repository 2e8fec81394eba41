package ktxn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The transaction checker's parts (in the spirit of Jepsen's): producers
// run transactions of named records and remember what they were told;
// read_committed consumers read everything back; Check finds the
// anomalies: an aborted record read, a committed transaction read
// partially or a record read twice, a transaction whose end the producer
// did not learn read partially, a record nobody wrote.

// Outcome is what a producer learned of one transaction.
type Outcome int8

const (
	Committed Outcome = iota
	Aborted
	Unknown // an error ended it: either outcome is allowed, all or nothing
)

// Txn is one transaction: its records' values and outcome.
type Txn struct {
	Name    string
	Records []string
	Outcome Outcome
}

// NewTxn names producer p's transaction n with k records.
func NewTxn(p, n, k int) *Txn {
	tx := &Txn{Name: fmt.Sprintf("p%d-t%d", p, n)}
	for i := range k {
		tx.Records = append(tx.Records, fmt.Sprintf("%s-r%d", tx.Name, i))
	}
	return tx
}

// RunTxn runs tx on topic's partitions (each record on a random one) as
// transactional id id, with a new client (so that a failed one leaves
// nothing behind: the next InitProducerId of id aborts what it left
// open), committing when commit; it sets and returns tx.Outcome.
func RunTxn(seeds []string, id, topic string, partitions int, tx *Txn, commit bool, rng *rand.Rand) Outcome {
	tx.Outcome = runTxn(seeds, id, topic, partitions, tx, commit, rng)
	return tx.Outcome
}

func runTxn(seeds []string, id, topic string, partitions int, tx *Txn, commit bool, rng *rand.Rand) Outcome {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionTimeout(20*time.Second), kgo.RetryTimeout(45*time.Second), kgo.RecordDeliveryTimeout(45*time.Second))
	if err != nil {
		return Aborted // nothing was written
	}
	defer p.Close()
	if err := p.BeginTransaction(); err != nil {
		return Aborted
	}
	for _, r := range tx.Records {
		rec := &kgo.Record{Topic: topic, Partition: int32(rng.IntN(partitions)), Value: []byte(r)}
		if err := p.ProduceSync(ctx, rec).FirstErr(); err != nil {
			commit = false
			break
		}
	}
	if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		return Unknown
	}
	if commit {
		return Committed
	}
	return Aborted
}

// ReadCommitted reads topic's partitions from their start with a kgo
// read_committed consumer until nothing more comes for idle (limit at
// most); the caller makes sure every transaction has ended first.
func ReadCommitted(seeds []string, topic string, partitions int, idle, limit time.Duration) ([]string, error) {
	offsets := map[int32]kgo.Offset{}
	for p := range partitions {
		offsets[int32(p)] = kgo.NewOffset().AtStart()
	}
	c, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out []string
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		ctx, cancel := context.WithTimeout(context.Background(), idle)
		fs := c.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)); n++ })
		if n == 0 && ctx.Err() != nil {
			break
		}
	}
	return out, nil
}

// Check returns the transactions per outcome and the anomalies of read
// against txns.
func Check(txns []*Txn, read []string) (byOutcome [3]int, anomalies []string) {
	counts := map[string]int{}
	for _, v := range read {
		counts[v]++
	}
	known := map[string]bool{}
	for _, tx := range txns {
		byOutcome[tx.Outcome]++
		seen := 0
		for _, r := range tx.Records {
			known[r] = true
			if counts[r] > 1 {
				anomalies = append(anomalies, fmt.Sprintf("%s read %d times", r, counts[r]))
			}
			if counts[r] > 0 {
				seen++
			}
		}
		switch {
		case tx.Outcome == Committed && seen != len(tx.Records):
			anomalies = append(anomalies, fmt.Sprintf("committed %s: %d of its %d records read", tx.Name, seen, len(tx.Records)))
		case tx.Outcome == Aborted && seen != 0:
			anomalies = append(anomalies, fmt.Sprintf("aborted %s: %d of its records read", tx.Name, seen))
		case tx.Outcome == Unknown && seen != 0 && seen != len(tx.Records):
			anomalies = append(anomalies, fmt.Sprintf("%s (outcome unknown): %d of its %d records read", tx.Name, seen, len(tx.Records)))
		}
	}
	for v := range counts {
		if !known[v] {
			anomalies = append(anomalies, fmt.Sprintf("read %q, which no transaction wrote", v))
		}
	}
	return byOutcome, anomalies
}
