package faultfs

import (
	"errors"
	"os"

	"github.com/zkafka/zkafka/store/segment"
)

// fileState is what a file of the FS holds that a crash would lose: the
// size it had at its last Sync (or when first opened, or truncated) and
// the byte ranges written since.
type fileState struct {
	syncedSize int64
	dirty      []span
}

// span is the bytes [off, end) of a file.
type span struct{ off, end int64 }

// opened starts tracking a file the first time it is opened: what it
// holds then counts as durable (O_TRUNC: empty).
func (f *FS) opened(name string, file segment.File, flag int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.mu.files[name]
	if st == nil {
		st = &fileState{}
		f.mu.files[name] = st
		if fi, err := file.Stat(); err == nil {
			st.syncedSize = fi.Size()
		}
	}
	if flag&os.O_TRUNC != 0 {
		st.syncedSize, st.dirty = 0, nil
	}
}

// wrote records n bytes written at off.
func (f *FS) wrote(name string, off, n int64) {
	if n <= 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.mu.files[name]
	if st == nil {
		return
	}
	if k := len(st.dirty) - 1; k >= 0 && off <= st.dirty[k].end && off+n >= st.dirty[k].off {
		st.dirty[k] = span{min(off, st.dirty[k].off), max(off+n, st.dirty[k].end)}
		return
	}
	st.dirty = append(st.dirty, span{off, off + n})
}

// truncated clips what was written to the new size.
func (f *FS) truncated(name string, size int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.mu.files[name]
	if st == nil {
		return
	}
	st.syncedSize = min(st.syncedSize, size)
	kept := st.dirty[:0]
	for _, s := range st.dirty {
		if s.off < size {
			kept = append(kept, span{s.off, min(s.end, size)})
		}
	}
	st.dirty = kept
}

// synced makes everything written to the file durable.
func (f *FS) synced(name string, file segment.File) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if st := f.mu.files[name]; st != nil {
		st.dirty = nil
		if fi, err := file.Stat(); err == nil {
			st.syncedSize = fi.Size()
		}
	}
}

func (f *FS) forget(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.mu.files, name)
}

func (f *FS) renamed(oldname, newname string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if st := f.mu.files[oldname]; st != nil {
		delete(f.mu.files, oldname)
		f.mu.files[newname] = st
	}
}

// Crash loses what a power failure may: in every file the FS opened, the
// bytes written since its last Sync past the size it had then, with a
// truncation to that size (an appended log loses its unsynced tail, as
// after a machine crash). Bytes rewritten below that size stay as written
// (the write reached the disk: one of the outcomes a crash allows), and so
// do renames and removals (the FS models data, not directory entries).
// From then on every WriteAt, Truncate, Sync and SyncDir fails with
// ErrInjected, as on a disk that is gone, so whatever the program does
// while it stops changes nothing more. Crash returns the first error of
// rewriting a file.
func (f *FS) Crash() error {
	f.io.Lock()
	defer f.io.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.syncsLeft, f.mu.failWrites = 0, true
	var errs []error
	for name, st := range f.mu.files {
		if len(st.dirty) > 0 {
			errs = append(errs, loseUnsynced(name, st))
		}
		st.dirty = nil
	}
	return errors.Join(errs...)
}

// loseUnsynced cuts the file name back to its size at its last Sync if it
// was written past it.
func loseUnsynced(name string, st *fileState) error {
	file, err := os.OpenFile(name, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	for _, s := range st.dirty {
		if s.end > st.syncedSize && size > st.syncedSize {
			size = st.syncedSize
		}
	}
	if size == fi.Size() {
		return nil
	}
	if err := file.Truncate(size); err != nil {
		return err
	}
	return file.Sync()
}
