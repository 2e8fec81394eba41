package gctune

import "testing"

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, MaxPercent},
		{1 << 20, MaxPercent},     // a small heap keeps Go's default
		{Headroom, MaxPercent},    // headroom = live: GOGC 100
		{2 * Headroom, 50},        // the headroom stays Headroom
		{Headroom * 100 / 40, 40}, //
		{Headroom * 100 / 35, 35}, //
		{210 << 20, MinPercent},   // a million znodes: 35 % at most
		{8 << 30, MinPercent},     // never below MinPercent
	} {
		if got := Percent(c.live); got != c.want {
			t.Errorf("Percent(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}
