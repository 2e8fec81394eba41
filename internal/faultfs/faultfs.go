// Package faultfs is a store/segment file system over the operating
// system's files that fails on demand, in the manner of pebble's
// vfs/errorfs: once armed, every Sync (fsync) or WriteAt of the files it
// opened returns an injected error, as a dying disk would. Tests hand it to
// the raft log (raftnode.Config.LogFS) to check that a server stops, rather
// than serving on, after a fatal storage error.
//
// The first failure is sticky, as fsync's is on Linux: after a failed
// fsync the kernel may have dropped the dirty pages, so nothing written
// before it can be trusted durable and the file is never "healed".
//
// Crash (crash.go) is the other fault: it drops every write not yet synced,
// as a machine that loses power drops its page cache, and fails every later
// operation. zkafkatest's Kill uses it on a broker's partition logs.
package faultfs

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/zkafka/zkafka/store/segment"
)

// ErrInjected is the error an armed FS returns (wrapped in an
// *fs.PathError naming the file).
var ErrInjected = errors.New("faultfs: injected I/O error")

// FS is a segment.FS whose files fail once armed. The zero value is not
// usable; call New. Its methods are safe for concurrent use.
type FS struct {
	// io is held shared by every WriteAt, Truncate and Sync while it
	// runs, and exclusively by Crash, so that no write lands after Crash
	// has dropped what was unsynced.
	io sync.RWMutex
	mu struct {
		sync.Mutex
		syncsLeft  int                   // successful Syncs left before they fail; <0: no limit
		failWrites bool                  // WriteAt fails too
		syncs      int                   // Syncs that succeeded
		files      map[string]*fileState // what was written since each file's last Sync
	}
}

// New returns an FS that does not fail until FailSyncsAfter is called.
func New() *FS {
	f := &FS{}
	f.mu.syncsLeft = -1
	f.mu.files = map[string]*fileState{}
	return f
}

// FailSyncsAfter lets n more Syncs succeed; every later Sync fails with
// ErrInjected, and so does every WriteAt after the first failed Sync (a
// disk that lost a write does not take the next).
func (f *FS) FailSyncsAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.syncsLeft = max(n, 0)
}

// Syncs returns the number of Syncs that succeeded.
func (f *FS) Syncs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.syncs
}

// sync decides the outcome of one Sync.
func (f *FS) sync() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.syncsLeft == 0 {
		f.mu.failWrites = true
		return false
	}
	if f.mu.syncsLeft > 0 {
		f.mu.syncsLeft--
	}
	f.mu.syncs++
	return true
}

// write decides the outcome of one WriteAt.
func (f *FS) write() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.mu.failWrites
}

// osFS is the file system the FS fails on top of: the segment log's own.
var osFS = segment.OS()

// OpenFile implements segment.FS.
func (f *FS) OpenFile(name string, flag int, perm fs.FileMode) (segment.File, error) {
	file, err := osFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	f.opened(name, file, flag)
	return &faultFile{File: file, name: name, fs: f}, nil
}

// Remove implements segment.FS.
func (f *FS) Remove(name string) error {
	f.forget(name)
	return osFS.Remove(name)
}

// Rename implements segment.FS.
func (f *FS) Rename(oldname, newname string) error {
	if err := osFS.Rename(oldname, newname); err != nil {
		return err
	}
	f.renamed(oldname, newname)
	return nil
}

// MkdirAll implements segment.FS.
func (f *FS) MkdirAll(name string, perm fs.FileMode) error { return osFS.MkdirAll(name, perm) }

// ReadDir implements segment.FS.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) { return osFS.ReadDir(name) }

// SyncDir implements segment.FS; it fails like a file's Sync.
func (f *FS) SyncDir(name string) error {
	if !f.sync() {
		return &fs.PathError{Op: "sync", Path: name, Err: ErrInjected}
	}
	return osFS.SyncDir(name)
}

// faultFile is a file of the operating system's FS, failing as its FS says.
type faultFile struct {
	segment.File
	name string
	fs   *FS
}

// allocator is what the segment log's own files implement to grow without
// writing zeros (fallocate).
type allocator interface{ Allocate(off, n int64) error }

// OSFile returns the underlying file (segment.OSFiler), for sendfile.
func (f *faultFile) OSFile() *os.File { return f.File.(segment.OSFiler).OSFile() }

// WriteAt writes unless the FS has failed a Sync.
func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.io.RLock()
	defer f.fs.io.RUnlock()
	if !f.fs.write() {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: ErrInjected}
	}
	n, err := f.File.WriteAt(p, off)
	f.fs.wrote(f.name, off, int64(n))
	return n, err
}

// Truncate changes the file's size unless the FS has failed a Sync; the
// new size counts as durable (see Crash).
func (f *faultFile) Truncate(size int64) error {
	f.fs.io.RLock()
	defer f.fs.io.RUnlock()
	if !f.fs.write() {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: ErrInjected}
	}
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	f.fs.truncated(f.name, size)
	return nil
}

// Sync is the OS file's (fdatasync), or ErrInjected once the FS is armed
// and its syncs spent.
func (f *faultFile) Sync() error {
	f.fs.io.RLock()
	defer f.fs.io.RUnlock()
	if !f.fs.sync() {
		return &fs.PathError{Op: "sync", Path: f.name, Err: ErrInjected}
	}
	if err := f.File.Sync(); err != nil {
		return err
	}
	f.fs.synced(f.name, f.File)
	return nil
}

// Allocate extends the file as the segment log's own files do (without it
// the log's preallocation writes zeros, tens of MiB per segment). It fails
// like WriteAt once the FS has failed a Sync.
func (f *faultFile) Allocate(off, n int64) error {
	if !f.fs.write() {
		return &fs.PathError{Op: "fallocate", Path: f.name, Err: ErrInjected}
	}
	a, ok := f.File.(allocator)
	if !ok {
		return errors.ErrUnsupported
	}
	return a.Allocate(off, n)
}
