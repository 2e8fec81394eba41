//go:build !unix

package broker

// volumeBytes is unknown here (-1, -1), as Kafka reports for storage it
// cannot size.
func volumeBytes(string) (total, usable int64) { return -1, -1 }
