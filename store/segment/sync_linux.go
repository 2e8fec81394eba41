package segment

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// datasync is fdatasync(2): data and the metadata needed to read it back
// (the size), but not the modification time.
func datasync(f *os.File) error {
	return fdCall(f, "fdatasync", syscall.Fdatasync)
}

// allocate is fallocate(2) mode 0: [off, off+n) is allocated (as unwritten
// extents, reading as zeros) and the file size raised to off+n.
func allocate(f *os.File, off, n int64) error {
	return fdCall(f, "fallocate", func(fd int) error { return syscall.Fallocate(fd, 0, off, n) })
}

// StartWriteback starts writing [off, off+n) of the file to the disk and
// returns without waiting (sync_file_range(2), SYNC_FILE_RANGE_WRITE): no
// durability, only less for a later fsync to do (Options.WritebackBytes).
func (f osFile) StartWriteback(off, n int64) error {
	return fdCall(f.File, "sync_file_range", func(fd int) error {
		return unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}

// fdCall runs call on f's descriptor, again while it is interrupted
// (EINTR), and names op and the file in its error.
func fdCall(f *os.File, op string, call func(fd int) error) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := sc.Control(func(fd uintptr) {
		for {
			serr = call(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: op, Path: f.Name(), Err: serr}
	}
	return nil
}
