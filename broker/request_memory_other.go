//go:build !unix

package broker

// mapBuffer allocates on the Go heap where anonymous mappings are not
// available (see request_memory_unix.go).
func mapBuffer(n int) ([]byte, error) { return make([]byte, 0, n), nil }

// unmapBuffer leaves the buffer to the garbage collector.
func unmapBuffer([]byte) {}
