package javahash

import "testing"

// Values computed with Java: "abc".hashCode() == 96354, "".hashCode() == 0,
// "/zookeeper".hashCode() == -1453087049 (int overflow), "é".hashCode() == 233.
func TestStringHashMatchesJava(t *testing.T) {
	for s, want := range map[string]int32{"": 0, "abc": 96354, "é": 233, "polygenelubricants": -2147483648} {
		if got := String(s); got != want {
			t.Errorf("hash(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestCapacities(t *testing.T) {
	for n, want := range map[int]uint32{0: 16, 12: 16, 13: 32, 24: 32, 25: 64} {
		if got := HashMapCapacity(n); got != want {
			t.Errorf("HashMapCapacity(%d) = %d, want %d", n, got, want)
		}
	}
	for n, want := range map[int]uint32{0: 16, 11: 16, 12: 32, 23: 32, 24: 64} {
		if got := ConcurrentHashMapCapacity(n); got != want {
			t.Errorf("ConcurrentHashMapCapacity(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestOrderIsByBucketThenInsertion(t *testing.T) {
	// 1 and 17 share bucket 1 of a 16-table; 2 is bucket 2; 0 bucket 0.
	got := Order([]int32{17, 2, 1, 0}, 16)
	want := []int{3, 0, 2, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestCloneCapacity(t *testing.T) {
	for n, want := range map[int]uint32{0: 1, 1: 2, 11: 16, 12: 32, 23: 32, 24: 64} {
		if got := CloneCapacity(n); got != want {
			t.Errorf("CloneCapacity(%d) = %d, want %d", n, got, want)
		}
	}
}
