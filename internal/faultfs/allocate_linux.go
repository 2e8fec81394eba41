package faultfs

import (
	"io/fs"
	"syscall"
)

// Allocate extends the file with fallocate(2) mode 0, as the segment log's
// own files do: without it the log's preallocation writes zeros, tens of
// MiB per segment. It fails like WriteAt once the FS has failed a Sync.
func (f *faultFile) Allocate(off, n int64) error {
	if !f.fs.write() {
		return &fs.PathError{Op: "fallocate", Path: f.Name(), Err: ErrInjected}
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := sc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fallocate(int(fd), 0, off, n)
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}
