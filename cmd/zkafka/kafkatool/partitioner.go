package kafkatool

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Partitioners (--partitioner), after the producers people know:
//
//	murmur2            keyed: murmur2 as Kafka's Java producer; keyless: sticky
//	consistent_random  keyed: CRC32 of the key as librdkafka; keyless: random
//	round-robin        every record to the next partition (keys ignored)
//	random             every record to a random partition (keys ignored)
//	sticky             every record to one partition until its batch is cut
//
// An explicit --partition overrides them all.
var partitionerNames = []string{"murmur2", "consistent_random", "round-robin", "random", "sticky"}

// placement decides one record's partition out of n; it is the pure part
// of a partitioner, so tests check it without a broker.
type placement struct {
	mode string
	mu   sync.Mutex
	next int // round-robin: the next partition
	// sticky: the partition of the current batch, -1 when a new one is due
	stick int
}

func newPlacement(mode string) (*placement, error) {
	for _, m := range partitionerNames {
		if m == mode {
			return &placement{mode: mode, stick: -1}, nil
		}
	}
	return nil, fmt.Errorf("--partitioner %q: want one of %v", mode, partitionerNames)
}

// partition returns the partition of a record with key (nil: no key).
func (p *placement) partition(key []byte, n int) int {
	switch {
	case p.mode == "murmur2" && key != nil:
		return murmur2Partition(key, n)
	case p.mode == "consistent_random" && key != nil:
		return int(crc32.ChecksumIEEE(key) % uint32(n))
	case p.mode == "consistent_random", p.mode == "random":
		return rand.IntN(n)
	case p.mode == "round-robin":
		p.mu.Lock()
		defer p.mu.Unlock()
		i := p.next % n
		p.next = i + 1
		return i
	}
	// sticky, and murmur2 without a key
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stick < 0 || p.stick >= n {
		p.stick = rand.IntN(n)
	}
	return p.stick
}

// newBatch ends the sticky partition's turn, as Java's sticky partitioner
// moves on when a batch is complete.
func (p *placement) newBatch() {
	p.mu.Lock()
	p.stick = -1
	p.mu.Unlock()
}

// keyed reports whether records with key must always go to one partition.
func (p *placement) keyed(key []byte) bool {
	return key != nil && (p.mode == "murmur2" || p.mode == "consistent_random")
}

// kgoPartitioner adapts a placement to kgo. Each topic gets its own
// placement state (a sticky partition or round-robin position is per
// topic, as in Kafka's producers).
type kgoPartitioner struct{ mode string }

func (k kgoPartitioner) ForTopic(string) kgo.TopicPartitioner {
	p, _ := newPlacement(k.mode) // the mode was checked when the flags were read
	if k.mode == "murmur2" || k.mode == "sticky" {
		return stickyTopicPartitioner{topicPartitioner{p}}
	}
	return topicPartitioner{p}
}

type topicPartitioner struct{ p *placement }

func (t topicPartitioner) RequiresConsistency(r *kgo.Record) bool { return t.p.keyed(r.Key) }
func (t topicPartitioner) Partition(r *kgo.Record, n int) int     { return t.p.partition(r.Key, n) }

// stickyTopicPartitioner also hears when kgo cuts a batch, and then picks
// a new partition for keyless records (KIP-480). kgo calls Partition again
// after OnNewBatch, which is why only sticky modes implement it: a
// round-robin position would move twice.
type stickyTopicPartitioner struct{ topicPartitioner }

func (t stickyTopicPartitioner) OnNewBatch() { t.p.newBatch() }
