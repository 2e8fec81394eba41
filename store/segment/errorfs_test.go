package segment

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// errorFS wraps the OS file system and injects faults into the files whose
// names end in suffix, like pebble's vfs/errorfs.
type errorFS struct {
	FS
	suffix string

	mu         sync.Mutex
	writeErr   error // returned by WriteAt
	shortWrite bool  // write half of the bytes before writeErr
	syncErr    error // returned by Sync
	truncErr   error // returned by Truncate
}

func (e *errorFS) set(f func(e *errorFS)) { e.mu.Lock(); f(e); e.mu.Unlock() }

func (e *errorFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := e.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, e.suffix) {
		return f, err
	}
	return &errorFile{File: f, fs: e}, nil
}

type errorFile struct {
	File
	fs *errorFS
}

func (f *errorFile) OSFile() *os.File { return osFileOf(f.File) }

func (f *errorFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	err, short := f.fs.writeErr, f.fs.shortWrite
	f.fs.mu.Unlock()
	if err == nil {
		return f.File.WriteAt(p, off)
	}
	if short {
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		return n, err
	}
	return 0, err
}

func (f *errorFile) Sync() error {
	f.fs.mu.Lock()
	err := f.fs.syncErr
	f.fs.mu.Unlock()
	if err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *errorFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	err := f.fs.truncErr
	f.fs.mu.Unlock()
	if err != nil {
		return err
	}
	return f.File.Truncate(size)
}

// TestWriteFaults: a failed or short write returns an error and leaves the
// log as it was; once the fault is gone appends continue at the same
// offset, and a reopen finds exactly the acknowledged batches.
func TestWriteFaults(t *testing.T) {
	cases := []struct {
		name string
		set  func(e *errorFS)
	}{
		{"ENOSPC", func(e *errorFS) { e.writeErr = syscall.ENOSPC }},
		{"short write", func(e *errorFS) { e.writeErr, e.shortWrite = syscall.ENOSPC, true }},
		{"short write, truncate fails too", func(e *errorFS) {
			e.writeErr, e.shortWrite, e.truncErr = syscall.ENOSPC, true, syscall.EIO
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			efs := &errorFS{FS: osFS{}, suffix: ".log"}
			o := Options{FS: efs, SegmentBytes: 1500}
			l := mustOpen(t, dir, o)
			var m model
			fill(t, l, &m, 20)
			efs.set(tc.set)
			for range 3 {
				b := AppendBatch(nil, payloadFor(m.next, 500), 1, 1)
				if off, err := l.Append(b, 1, 1); err == nil || off != -1 {
					t.Fatalf("Append on a full disk = %d, %v", off, err)
				}
			}
			checkLog(t, l, &m)
			efs.set(func(e *errorFS) { e.writeErr, e.shortWrite, e.truncErr = nil, false, nil })
			fill(t, l, &m, 20)
			checkLog(t, l, &m)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = mustOpen(t, dir, Options{SegmentBytes: 1500})
			defer l.Close()
			checkLog(t, l, &m)
		})
	}
}

// TestSyncFault: a failed fsync is sticky (the kernel may have dropped the
// dirty pages), reads still work, and a reopen recovers what is there.
func TestSyncFault(t *testing.T) {
	dir := t.TempDir()
	efs := &errorFS{FS: osFS{}, suffix: ".log"}
	l := mustOpen(t, dir, Options{FS: efs})
	var m model
	fill(t, l, &m, 10)
	efs.set(func(e *errorFS) { e.syncErr = syscall.EIO })
	if err := l.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync = %v, want EIO", err)
	}
	efs.set(func(e *errorFS) { e.syncErr = nil })
	if _, err := l.Append(AppendBatch(nil, nil, 1, 0), 1, 0); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Append after a failed fsync = %v, want the sticky EIO", err)
	}
	if err := l.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("second Sync = %v", err)
	}
	checkLog(t, l, &m)
	l.Close()
	l = mustOpen(t, dir, Options{})
	defer l.Close()
	checkLog(t, l, &m)
	fill(t, l, &m, 2)
	checkLog(t, l, &m)
}

// TestFlushByCountFault: the fsync inside Append reports its error; the
// batch itself was written and is readable.
func TestFlushByCountFault(t *testing.T) {
	efs := &errorFS{FS: osFS{}, suffix: ".log"}
	l := mustOpen(t, t.TempDir(), Options{FS: efs, FlushEntries: 1})
	defer l.Close()
	efs.set(func(e *errorFS) { e.syncErr = syscall.EIO })
	off, err := l.Append(AppendBatch(nil, []byte("a"), 1, 0), 1, 0)
	if off != 0 || !errors.Is(err, syscall.EIO) {
		t.Fatalf("Append = %d, %v", off, err)
	}
	if l.NextOffset() != 1 {
		t.Fatalf("NextOffset = %d", l.NextOffset())
	}
}

// TestRollFault: if the new segment cannot be created the append fails and
// the old segment stays active.
func TestRollFault(t *testing.T) {
	dir := t.TempDir()
	efs := &errorFS{FS: osFS{}, suffix: ".index"}
	l := mustOpen(t, dir, Options{FS: efs, SegmentBytes: 500})
	defer l.Close()
	var m model
	fill(t, l, &m, 3)
	segs := len(l.list())
	efs.set(func(e *errorFS) { e.syncErr = syscall.EIO })
	for i := 0; len(l.list()) == segs && i < 20; i++ {
		b := AppendBatch(nil, payloadFor(m.next, 100), 1, 1)
		if _, err := l.Append(b, 1, 1); err != nil {
			if !errors.Is(err, syscall.EIO) {
				t.Fatal(err)
			}
			break
		}
		m.append(entry{count: 1, ts: 1, payload: payloadFor(m.next, 100)})
	}
	checkLog(t, l, &m)
}
