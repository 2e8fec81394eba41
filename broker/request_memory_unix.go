//go:build unix

package broker

import "syscall"

// mapBuffer returns an empty buffer of capacity n in anonymous memory
// outside the Go heap. Request buffers charged to the request budget live
// there: the garbage collector neither counts them (a heap of 100 MiB of
// buffers would otherwise grow to 200 MiB before each collection) nor
// frees them; unmapBuffer gives the memory back to the kernel at once.
// The pages become resident only as bytes are written into them.
func mapBuffer(n int) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	return b[:0], nil
}

// unmapBuffer unmaps a buffer from mapBuffer (any length of it). Nothing
// may refer to it afterwards.
func unmapBuffer(b []byte) {
	syscall.Munmap(b[:cap(b)])
}
