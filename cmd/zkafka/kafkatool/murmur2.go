package kafkatool

import "encoding/binary"

// murmur2 is the 32-bit MurmurHash2 of Kafka's Java client
// (org.apache.kafka.common.utils.Utils.murmur2, seed 0x9747b28c), which its
// default partitioner uses for keyed records: the partition of key k is
// toPositive(murmur2(k)) % partitions, so keys produced here land where
// Java producers put them. Go's uint32 arithmetic wraps as Java's int does;
// Java's >>> is Go's >> on an unsigned value.
func murmur2(data []byte) int32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	n := len(data)
	h := uint32(seed) ^ uint32(n)
	for len(data) >= 4 {
		k := binary.LittleEndian.Uint32(data)
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
		data = data[4:]
	}
	switch len(data) {
	case 3:
		h ^= uint32(data[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// murmur2Partition is the Java producer's partition of a keyed record:
// Utils.toPositive(murmur2(key)) % n.
func murmur2Partition(key []byte, n int) int {
	return int(uint32(murmur2(key))&0x7fffffff) % n
}
