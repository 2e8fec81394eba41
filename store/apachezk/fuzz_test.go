package apachezk

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeEntry: any bytes as a log entry decode or fail with
// ErrCorrupt, never panic; what decodes replays on an empty tree.
func FuzzDecodeEntry(f *testing.F) {
	f.Add(entry(1, 14, true, i32(1), sub(1, str("/m"), buf(nil), open, boolean(false), i32(4))))
	f.Add(entry(2, -11, false, i32(1), str("/e")))
	f.Fuzz(func(t *testing.T, b []byte) {
		tx, err := decodeEntry(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		emptyTree().apply(tx)
	})
}

// FuzzReadSnapshot: a damaged snapshot loads or fails with an *Error at
// an offset inside the file, never panics.
func FuzzReadSnapshot(f *testing.F) {
	good, err := os.ReadFile(filepath.Join(fixture, "snapshot.7b"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, 100, byte(1))
	f.Add(good[:3000], 0, byte(0))
	f.Fuzz(func(t *testing.T, b []byte, at int, x byte) {
		b = bytes.Clone(b)
		if len(b) > 0 {
			b[uint(at)%uint(len(b))] ^= x
		}
		p := filepath.Join(t.TempDir(), "snapshot.1")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readSnapshotFile(p, 1)
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Offset < 0 || e.Offset > int64(len(b))) {
			t.Fatalf("error %v", err)
		}
	})
}
