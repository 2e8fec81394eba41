package broker

import "testing"

// TestOffsetsPartitionOf: a group's __consumer_offsets partition, as
// Kafka's GroupMetadataManager.partitionFor computes it; the expected
// values were computed with Java (jshell: Utils.abs(g.hashCode()) % 50),
// including groups whose hash is Integer.MIN_VALUE (Utils.abs maps it to
// 0, where Math.abs would stay negative) and non-ASCII ids.
func TestOffsetsPartitionOf(t *testing.T) {
	for _, c := range []struct {
		group string
		want  int32
	}{
		{"group-0", 48}, {"my-group", 12}, {"console-consumer-12345", 6},
		{"polygenelubricants", 0}, {"GydZG_", 0}, {"DESIGNING WORKHOUSES", 0},
		{"é-gruppe", 31}, {"😀", 49},
	} {
		if got := offsetsPartitionOf(c.group, 50); got != c.want {
			t.Errorf("offsetsPartitionOf(%q, 50) = %d, want %d", c.group, got, c.want)
		}
	}
}
