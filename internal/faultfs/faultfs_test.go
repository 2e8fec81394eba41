package faultfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
