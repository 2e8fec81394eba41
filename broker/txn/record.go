package txn

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The records of __transaction_state, Kafka 3.7's TransactionLogKey and
// TransactionLogValue (kmsg's TxnMetadataKey / TxnMetadataValue):
//
//	key:   version int16 (0) | transactional_id string
//	value: version int16 (0) | producer_id int64 | producer_epoch int16 |
//	       transaction_timeout_ms int32 | state int8 |
//	       [topic string | [partition int32]] |
//	       last_update_ms int64 | start_ms int64
//
// A null value is the tombstone of an expired (Dead) id; the latest
// record of an id wins when the log is loaded.

// EncodeKey is the record key of id.
func EncodeKey(id string) []byte {
	k := kmsg.NewTxnMetadataKey()
	k.Version, k.TransactionalID = 0, id
	return k.AppendTo(nil)
}

// EncodeValue is the record value of m; nil (a tombstone) when Dead.
func EncodeValue(m Metadata) []byte {
	if m.State == Dead {
		return nil
	}
	v := kmsg.NewTxnMetadataValue()
	v.Version, v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = 0, m.ProducerID, m.ProducerEpoch, m.TimeoutMs
	v.State, v.LastUpdateTimestamp, v.StartTimestamp = kmsg.TransactionState(m.State), m.UpdateMs, m.StartMs
	for _, p := range m.Partitions {
		if n := len(v.Topics); n == 0 || v.Topics[n-1].Topic != p.Topic {
			t := kmsg.NewTxnMetadataValueTopic()
			t.Topic = p.Topic
			v.Topics = append(v.Topics, t)
		}
		last := &v.Topics[len(v.Topics)-1]
		last.Partitions = append(last.Partitions, p.Partition)
	}
	return v.AppendTo(nil)
}

// ErrNotTxnRecord is returned for a key that is not a TransactionLogKey.
var ErrNotTxnRecord = errors.New("txn: not a transaction log record")

// Decode reads one record: the id and its metadata, nil for a tombstone.
func Decode(key, value []byte) (string, *Metadata, error) {
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil || k.Version != 0 {
		return "", nil, fmt.Errorf("%w: key version %d: %v", ErrNotTxnRecord, k.Version, err)
	}
	if value == nil {
		return k.TransactionalID, nil, nil
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(value); err != nil {
		return "", nil, fmt.Errorf("txn: value of %q: %w", k.TransactionalID, err)
	}
	m := &Metadata{ProducerID: v.ProducerID, LastProducerID: -1, ProducerEpoch: v.ProducerEpoch, LastProducerEpoch: NoEpoch,
		TimeoutMs: v.TimeoutMillis, State: State(v.State), StartMs: v.StartTimestamp, UpdateMs: v.LastUpdateTimestamp}
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			m.Partitions = append(m.Partitions, TopicPartition{t.Topic, p})
		}
	}
	return k.TransactionalID, m, nil
}
