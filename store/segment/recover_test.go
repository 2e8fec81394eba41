package segment

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// buildLog writes a log of a few segments and returns its model.
func buildLog(t *testing.T, dir string, o Options, n int) *model {
	t.Helper()
	l := mustOpen(t, dir, o)
	var m model
	fill(t, l, &m, n)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return &m
}

func segPath(dir string, base int64, ext string) string {
	return filepath.Join(dir, segmentName(base, ext))
}

func lastBase(t *testing.T, dir string) int64 {
	t.Helper()
	bases, err := (&Log{dir: dir, fs: osFS{}}).listBases()
	if err != nil || len(bases) == 0 {
		t.Fatalf("no segments: %v", err)
	}
	return bases[len(bases)-1]
}

// TestRecoverActiveTail damages the tail of the active segment in several
// ways; Open must cut it after the last intact batch and carry on.
func TestRecoverActiveTail(t *testing.T) {
	o := Options{SegmentBytes: 2000, IndexIntervalBytes: 200}
	cases := []struct {
		name    string
		damage  func(b []byte, lastPos int) []byte
		dropped int // batches lost at the end
	}{
		{"flip a payload byte of the last batch", func(b []byte, p int) []byte { b[len(b)-1] ^= 1; return b }, 1},
		{"flip a header byte of the last batch", func(b []byte, p int) []byte { b[p+offAttributes] ^= 0x80; return b }, 1},
		{"bad magic", func(b []byte, p int) []byte { b[p+offMagic] = 1; return b }, 1},
		{"huge length", func(b []byte, p int) []byte { copy(b[p+offBatchLength:], []byte{0x7f, 0xff, 0xff, 0xff}); return b }, 1},
		{"negative length", func(b []byte, p int) []byte { copy(b[p+offBatchLength:], []byte{0xff, 0xff, 0xff, 0xfe}); return b }, 1},
		{"torn last batch", func(b []byte, p int) []byte { return b[:len(b)-5] }, 1},
		{"torn header", func(b []byte, p int) []byte { return b[:p+20] }, 1},
		{"zeros after", func(b []byte, p int) []byte { return append(b, make([]byte, 4096)...) }, 0},
		{"half a batch after", func(b []byte, p int) []byte { return append(b, b[p:p+(len(b)-p)/2]...) }, 0},
		{"offset going back", func(b []byte, p int) []byte { copy(b[p:], be64(0)); return b }, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := buildLog(t, dir, o, 40)
			base := lastBase(t, dir)
			path := segPath(dir, base, ".log")
			b, err := os.ReadFile(path)
			if err != nil || len(b) == 0 {
				t.Fatalf("active segment: %d bytes, %v", len(b), err)
			}
			last := m.entries[len(m.entries)-1]
			lastPos := len(b) - HeaderSize - len(last.payload)
			if err := os.WriteFile(path, tc.damage(b, lastPos), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.dropped > 0 {
				m.truncate(last.base)
			}
			l := mustOpen(t, dir, o)
			defer l.Close()
			checkLog(t, l, m)
			checkTimeAgainstModel(t, l, m)
			fill(t, l, m, 5)
			checkLog(t, l, m)
		})
	}
}

// TestRecoverIndexes damages, empties or deletes index files; Open must
// rebuild them byte for byte as they were.
func TestRecoverIndexes(t *testing.T) {
	o := Options{SegmentBytes: 3000, IndexIntervalBytes: 150}
	cases := []struct {
		name   string
		ext    string
		damage func(path string) error
	}{
		{"delete offset index", ".index", os.Remove},
		{"delete time index", ".timeindex", os.Remove},
		{"offset index odd size", ".index", func(p string) error { return appendFile(p, []byte{1, 2, 3}) }},
		{"time index odd size", ".timeindex", func(p string) error { return appendFile(p, []byte{1}) }},
		{"offset index empty", ".index", func(p string) error { return os.Truncate(p, 0) }},
		{"time index empty", ".timeindex", func(p string) error { return os.Truncate(p, 0) }},
		{"offset index last entry wrong", ".index", func(p string) error { return bumpLast(p, 8, 0) }},
		{"offset index last position wrong", ".index", func(p string) error { return bumpLast(p, 8, 4) }},
		{"time index last offset past end", ".timeindex", func(p string) error { return bumpLastBy(p, 12, 8, 1<<20) }},
		{"offset index garbage", ".index", func(p string) error { return os.WriteFile(p, []byte("garbage!garbage!"), 0o644) }},
	}
	for _, tc := range cases {
		for _, which := range []string{"first", "active"} {
			t.Run(tc.name+"/"+which, func(t *testing.T) {
				dir := t.TempDir()
				m := buildLog(t, dir, o, 60)
				l := mustOpen(t, dir, o)
				for l.active().size.Load() < 2000 {
					fill(t, l, m, 1)
				}
				l.Close()
				base := int64(0)
				if which == "active" {
					base = lastBase(t, dir)
				}
				path := segPath(dir, base, tc.ext)
				orig, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := tc.damage(path); err != nil {
					t.Fatal(err)
				}
				l = mustOpen(t, dir, o)
				checkLog(t, l, m)
				checkTimeAgainstModel(t, l, m)
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil || string(got) != string(orig) {
					t.Fatalf("rebuilt %s differs: %d bytes, was %d (%v)", tc.ext, len(got), len(orig), err)
				}
			})
		}
	}
}

// TestCorruptClosedSegment: a bad batch in a segment that is not the last
// is not a torn write; with its index gone (so it must be scanned) Open
// names the file and position.
func TestCorruptClosedSegment(t *testing.T) {
	dir := t.TempDir()
	o := Options{SegmentBytes: 2000}
	buildLog(t, dir, o, 40)
	path := segPath(dir, 0, ".log")
	b, _ := os.ReadFile(path)
	b[HeaderSize+3] ^= 0xff // first batch's payload
	os.WriteFile(path, b, 0o644)
	os.Remove(segPath(dir, 0, ".timeindex"))
	_, err := Open(dir, o)
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) || ce.File != path || ce.Pos != 0 || ce.Offset != 0 {
		t.Fatalf("Open = %v, want a CorruptError for %s at 0", err, path)
	}
}

func TestCorruptCheckpoint(t *testing.T) {
	dir := t.TempDir()
	buildLog(t, dir, Options{}, 3)
	os.WriteFile(filepath.Join(dir, checkpointName), []byte("x1"), 0o644)
	if _, err := Open(dir, Options{}); err == nil || !contains(err.Error(), checkpointName) {
		t.Fatalf("Open with a bad checkpoint = %v", err)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}

func appendFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return errors.Join(err, f.Close())
}

// bumpLast adds 1 to the int32 at field of the last entry.
func bumpLast(path string, size, field int) error { return bumpLastBy(path, size, field, 1) }

func bumpLastBy(path string, size, field int, by uint32) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(b) < size {
		return errors.New("index has no entries")
	}
	p := len(b) - size + field
	v := uint32(b[p])<<24 | uint32(b[p+1])<<16 | uint32(b[p+2])<<8 | uint32(b[p+3])
	v += by
	b[p], b[p+1], b[p+2], b[p+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	return os.WriteFile(path, b, 0o644)
}
