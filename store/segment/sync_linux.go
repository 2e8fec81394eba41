package segment

import (
	"os"
	"syscall"
)

// datasync is fdatasync(2): data and the metadata needed to read it back
// (the size), but not the modification time.
func datasync(f *os.File) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := sc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}

// allocate is fallocate(2) mode 0: [off, off+n) is allocated (as unwritten
// extents, reading as zeros) and the file size raised to off+n.
func allocate(f *os.File, off, n int64) error {
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
	if serr != nil {
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: serr}
	}
	return nil
}
