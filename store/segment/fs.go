package segment

import (
	"io"
	"io/fs"
	"os"
)

// FS is the file system the log works through. The zero Options use the
// operating system's; tests wrap it to inject write errors, short writes,
// sync errors and crashes (see errorfs_test.go). Paths are the log's own
// (dir joined with a file name).
type FS interface {
	// OpenFile opens or creates a file, as os.OpenFile.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Remove deletes a file, as os.Remove.
	Remove(name string) error
	// Rename atomically replaces newname with oldname, as os.Rename.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and its parents, as os.MkdirAll.
	MkdirAll(name string, perm fs.FileMode) error
	// ReadDir lists a directory, as os.ReadDir.
	ReadDir(name string) ([]fs.DirEntry, error)
	// SyncDir makes the directory's entries (creations, removals,
	// renames) durable.
	SyncDir(name string) error
}

// File is an open file of an FS. The log only uses positional IO, so a
// File is safe for concurrent ReadAt by readers while the appender writes.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Truncate changes the size of the file, as os.File.Truncate.
	Truncate(size int64) error
	// Sync makes the file's data and size durable (fsync or fdatasync).
	Sync() error
	// Stat returns the file's metadata, as os.File.Stat.
	Stat() (fs.FileInfo, error)
}

// OSFiler is implemented by Files backed by an operating-system file; the
// log hands that file out in FileRange for sendfile. A File of a wrapping
// FS should implement it by returning the wrapped file.
type OSFiler interface {
	OSFile() *os.File
}

// OS returns the FS of the operating system, the one the log uses by
// default; wrapping FSs (fault injection) delegate to it.
func OS() FS { return osFS{} }

// osFS is the FS of the operating system.
type osFS struct{}

// osFile is an *os.File whose Sync is fdatasync where the OS has it: the log
// writes data and grows files, and fdatasync flushes both, without mtime.
type osFile struct{ *os.File }

// OSFile returns the underlying file.
func (f osFile) OSFile() *os.File { return f.File }

// Sync flushes the file's data and size to stable storage.
func (f osFile) Sync() error { return datasync(f.File) }

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) Rename(oldname, newname string) error         { return os.Rename(oldname, newname) }
func (osFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }

func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// osFileOf returns the operating-system file behind f, or nil.
func osFileOf(f File) *os.File {
	if o, ok := f.(OSFiler); ok {
		return o.OSFile()
	}
	return nil
}

// allocator is implemented by Files that can grow themselves without
// writing the new bytes (fallocate(2) mode 0 on Linux): the new bytes read
// as zeros and the size changes.
type allocator interface {
	Allocate(off, n int64) error
}

// Allocate extends the file to off+n with fallocate where the OS has it.
func (f osFile) Allocate(off, n int64) error { return allocate(f.File, off, n) }

// zeroChunk is what extendFile writes when the file cannot allocate.
var zeroChunk [64 << 10]byte

// extendFile makes f at least to bytes long, the bytes from from on reading
// as zeros: it allocates them if f can, and writes zeros otherwise.
func extendFile(f File, from, to int64) error {
	if from >= to {
		return nil
	}
	if a, ok := f.(allocator); ok {
		if err := a.Allocate(from, to-from); err == nil {
			return nil
		}
	}
	for p := from; p < to; {
		n, err := f.WriteAt(zeroChunk[:min(int64(len(zeroChunk)), to-p)], p)
		if err != nil {
			return err
		}
		p += int64(n)
	}
	return nil
}
