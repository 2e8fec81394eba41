package broker

import (
	"strings"
	"testing"
)

func TestQueuedMaxRequestBytesConfig(t *testing.T) {
	for _, tc := range []struct {
		props string
		want  int64
		err   string
	}{
		{"", DefaultQueuedMaxRequestBytes, ""},
		{"queued.max.request.bytes=-1", -1, ""},
		{"queued.max.request.bytes=268435456", 256 << 20, ""},
		{"queued.max.request.bytes=104857600\nsocket.request.max.bytes=104857600", 100 << 20, ""},
		{"queued.max.request.bytes=1000", 0, "at least socket.request.max.bytes"},
		{"socket.request.max.bytes=209715200", 200 << 20, ""}, // the default follows
		{"socket.request.max.bytes=209715200\nqueued.max.request.bytes=104857600", 0, "at least socket.request.max.bytes"},
		{"queued.max.request.bytes=lots", 0, "queued.max.request.bytes"},
	} {
		cfg, err := ParseProperties(strings.NewReader(tc.props), nil)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want one containing %q", tc.props, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.props, err)
		case cfg.QueuedMaxRequestBytes != tc.want:
			t.Errorf("%q: %d, want %d", tc.props, cfg.QueuedMaxRequestBytes, tc.want)
		}
	}
}
