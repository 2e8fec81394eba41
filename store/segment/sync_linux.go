package segment

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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

// StartWriteback starts writing [off, off+n) of the file to the disk and
// returns without waiting (sync_file_range(2), SYNC_FILE_RANGE_WRITE): no
// durability, only less for a later fsync to do (Options.WritebackBytes).
func (f osFile) StartWriteback(off, n int64) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := sc.Control(func(fd uintptr) {
		for {
			serr = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "sync_file_range", Path: f.Name(), Err: serr}
	}
	return nil
}
