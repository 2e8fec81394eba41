package main

import (
	"os"
	"syscall"
)

// datasync is what the log's Sync does on Linux: fdatasync(2).
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
