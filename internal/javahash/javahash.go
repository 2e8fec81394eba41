// Package javahash reproduces the iteration order of Java's HashMap,
// HashSet and ConcurrentHashMap for the few places where Apache ZooKeeper
// lets that order show on the wire: the order of a session's auth
// identities (a ConcurrentHashMap-backed set, visible in "auth" ACL
// expansion and whoAmI) and the order in which a closed session's
// ephemerals are deleted (a HashSet, visible in the order of the watch
// events). Matching it keeps zkafka's answers identical to ZooKeeper's.
//
// Invariant: for n entries, the order is by bucket index (hash spread and
// masked by the table size Java would have), ties kept in insertion order —
// which is what Java's tables give, since their resizes keep the relative
// order of the entries of a bucket.
package javahash

import (
	"sort"
	"unicode/utf16"
)

// String is java.lang.String.hashCode: s[0]*31^(n-1) + ... over UTF-16 code
// units, in int32 arithmetic.
func String(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return stringUTF16(s)
		}
		h = 31*h + int32(s[i])
	}
	return h
}

func stringUTF16(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// ID is org.apache.zookeeper.data.Id.hashCode.
func ID(scheme, id string) int32 {
	h := int32(17)
	h = 37*h + String(scheme)
	return 37*h + String(id)
}

func spread(h int32) uint32 { return uint32(h) ^ uint32(h)>>16 }

// HashMapCapacity is the table size of a HashMap or HashSet built by
// putting n entries into a new default one (initial 16, doubled whenever
// the size exceeds three quarters of it).
func HashMapCapacity(n int) uint32 {
	c := uint32(16)
	for uint64(n) > uint64(c)*3/4 {
		c <<= 1
	}
	return c
}

// ConcurrentHashMapCapacity is the table size of a default
// ConcurrentHashMap after n puts (it resizes once the count reaches three
// quarters of the table).
func ConcurrentHashMapCapacity(n int) uint32 {
	c := uint32(16)
	for uint64(n) >= uint64(c)-uint64(c>>2) {
		c <<= 1
	}
	return c
}

// Order sorts the indexes 0..len(hashes)-1 (given in insertion order) into
// the iteration order of a table of the given capacity.
func Order(hashes []int32, capacity uint32) []int {
	idx := make([]int, len(hashes))
	for i := range idx {
		idx[i] = i
	}
	mask := capacity - 1
	sort.SliceStable(idx, func(a, b int) bool {
		return spread(hashes[idx[a]])&mask < spread(hashes[idx[b]])&mask
	})
	return idx
}

// CloneCapacity is the table size of a copy of an n-entry HashSet or HashMap
// (new HashSet<>(set), set.clone()): the smallest power of two not below
// n/0.75+1.
func CloneCapacity(n int) uint32 {
	want := uint32(float32(n)/0.75 + 1)
	c := uint32(1)
	for c < want {
		c <<= 1
	}
	return c
}
