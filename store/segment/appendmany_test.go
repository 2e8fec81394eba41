package segment

import (
	"errors"
	"fmt"
	"testing"
)

// AppendBatches gives the same log as one Append per batch, under every
// layout (rolls, indexes, preallocation), across a reopen.
func TestAppendBatchesLikeAppends(t *testing.T) {
	for _, lay := range layouts {
		t.Run(lay.name, func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, lay.opts)
			var m model
			for g := range 40 {
				var buf []byte
				for i := range g%5 + 1 {
					e := entry{count: int32(i%3 + 1), ts: int64(1000 + g), payload: []byte(fmt.Sprintf("group %d batch %d %s", g, i, make([]byte, g*3)))}
					buf = AppendBatch(buf, e.payload, e.count, e.ts)
					m.append(e)
				}
				want := m.entries[len(m.entries)-(g%5+1)].base
				base, err := l.AppendBatches(buf)
				if err != nil || base != want {
					t.Fatalf("AppendBatches(group %d) = %d, %v; want %d", g, base, err, want)
				}
			}
			checkLog(t, l, &m)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = mustOpen(t, dir, lay.opts)
			defer l.Close()
			checkLog(t, l, &m)
		})
	}
}

func TestAppendBatchesInvalid(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{})
	defer l.Close()
	good := AppendBatch(nil, []byte("x"), 2, 5)
	bad := append([]byte{}, good...)
	bad[offMagic] = 1
	for name, buf := range map[string][]byte{
		"empty":         nil,
		"short":         good[:20],
		"cut":           append(append([]byte{}, good...), good[:30]...),
		"second bad":    append(append([]byte{}, good...), bad...),
		"trailing byte": append(append([]byte{}, good...), 0),
	} {
		if _, err := l.AppendBatches(buf); !errors.Is(err, ErrInvalidBatch) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if l.NextOffset() != 0 || l.Size() != 0 {
		t.Fatalf("invalid appends changed the log")
	}
}
