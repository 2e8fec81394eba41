package faultfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/zkafka/zkafka/store/segment"
)

// TestFailSyncsAfter: n Syncs succeed after FailSyncsAfter(n); then Sync,
// WriteAt and SyncDir fail with ErrInjected, for good.
func TestFailSyncsAfter(t *testing.T) {
	fs := New()
	dir := t.TempDir()
	f, err := fs.OpenFile(filepath.Join(dir, "a"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range 3 {
		if err := f.Sync(); err != nil {
			t.Fatalf("Sync of an unarmed FS: %v", err)
		}
	}
	fs.FailSyncsAfter(2)
	for i := range 2 {
		if _, err := f.WriteAt([]byte("x"), int64(i)); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatalf("Sync %d of 2 allowed: %v", i+1, err)
		}
	}
	if got := fs.Syncs(); got != 5 {
		t.Fatalf("Syncs() = %d, want 5", got)
	}
	for range 2 {
		if err := f.Sync(); !errors.Is(err, ErrInjected) {
			t.Fatalf("Sync after the allowed ones: %v", err)
		}
	}
	if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, ErrInjected) {
		t.Fatalf("WriteAt after a failed Sync: %v", err)
	}
	if err := fs.SyncDir(dir); !errors.Is(err, ErrInjected) {
		t.Fatalf("SyncDir after a failed Sync: %v", err)
	}
}

// TestCrash: Crash cuts each file back to its size at its last Sync when
// it was written past it (synced or not, closed or open), keeps a file
// synced since its last write whole, and fails every later write.
func TestCrash(t *testing.T) {
	fs := New()
	dir := t.TempDir()
	open := func(name string) segment.File {
		t.Helper()
		f, err := fs.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	write := func(f segment.File, off int64, s string) {
		t.Helper()
		if _, err := f.WriteAt([]byte(s), off); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := open("a"), open("b"), open("c")
	write(a, 0, "durable")
	must(t, a.Sync())
	write(a, 7, "-lost")
	write(b, 0, "all synced")
	must(t, b.Sync())
	write(c, 0, "never synced")
	must(t, c.Close()) // closing is no sync
	must(t, fs.Crash())
	for name, want := range map[string]string{"a": "durable", "b": "all synced", "c": ""} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		must(t, err)
		if string(got) != want {
			t.Errorf("%s after Crash: %q, want %q", name, got, want)
		}
	}
	if _, err := a.WriteAt([]byte("x"), 0); !errors.Is(err, ErrInjected) {
		t.Fatalf("WriteAt after Crash: %v", err)
	}
	if err := b.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("Sync after Crash: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
