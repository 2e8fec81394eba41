package kproto

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func frameOf(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func TestReadFrame(t *testing.T) {
	small := bytes.Repeat([]byte{1}, 10)
	big := bytes.Repeat([]byte{2}, 3*frameGrowStep+5) // grows past cap in steps
	var stream []byte
	stream = append(stream, frameOf(small)...)
	stream = append(stream, frameOf(nil)...)
	stream = append(stream, frameOf(big)...)
	stream = append(stream, frameOf(small)...)
	for name, r := range map[string]io.Reader{
		"whole":   bytes.NewReader(stream),
		"onebyte": iotest.OneByteReader(bytes.NewReader(stream)),
		"half":    iotest.HalfReader(bytes.NewReader(stream)),
	} {
		br := bufio.NewReaderSize(r, 16)
		buf := make([]byte, 0, 64)
		for i, want := range [][]byte{small, {}, big, small} {
			got, err := ReadFrame(br, buf, DefaultMaxRequestBytes)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s frame %d: err %v, len %d want %d", name, i, err, len(got), len(want))
			}
			buf = got[:0]
		}
		if _, err := ReadFrame(br, buf, DefaultMaxRequestBytes); err != io.EOF {
			t.Fatalf("%s: want io.EOF at the end, got %v", name, err)
		}
	}
}

func TestReadFrameErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input []byte
		max   int
		want  func(error) bool
	}{
		{"oversize", binary.BigEndian.AppendUint32(nil, 101), 100, func(err error) bool {
			var fe *FrameSizeError
			return errors.As(err, &fe) && fe.Size == 101
		}},
		{"huge", []byte{0x7f, 0xff, 0xff, 0xff}, DefaultMaxRequestBytes, func(err error) bool {
			var fe *FrameSizeError
			return errors.As(err, &fe)
		}},
		{"negative", []byte{0xff, 0xff, 0xff, 0xfe}, 100, func(err error) bool {
			var fe *FrameSizeError
			return errors.As(err, &fe) && fe.Size == -2
		}},
		{"short size", []byte{0, 0}, 100, func(err error) bool { return err == io.ErrUnexpectedEOF }},
		{"short body", append(binary.BigEndian.AppendUint32(nil, 10), 1, 2), 100, func(err error) bool { return err == io.ErrUnexpectedEOF }},
		{"short big body", append(binary.BigEndian.AppendUint32(nil, 5<<20), 1, 2), DefaultMaxRequestBytes, func(err error) bool { return err == io.ErrUnexpectedEOF }},
	} {
		_, err := ReadFrame(bufio.NewReader(bytes.NewReader(tc.input)), nil, tc.max)
		if !tc.want(err) {
			t.Errorf("%s: unexpected error %v", tc.name, err)
		}
	}
	// Neither an oversize size nor a large size whose bytes never arrive
	// makes ReadFrame allocate the announced size: not 1.5 GiB, 90 MiB,
	// nor a size that real produce requests have (16 MiB - 1).
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, in := range [][]byte{{0x7f, 0xff, 0xff, 0xff}, {0x05, 0xff, 0xff, 0xff, 1, 2, 3}, {0x00, 0xff, 0xff, 0xff, 1, 2, 3}} {
		ReadFrame(bufio.NewReader(bytes.NewReader(in)), nil, DefaultMaxRequestBytes)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("ReadFrame allocated %d bytes for frames that never arrived", grew)
	}
}

// TestReadFrameBodyGrowsWithArrival checks that the buffer grows with the
// bytes that arrived, never further than twice them (or frameGrowStep),
// whatever the size announced, and that a GrowFunc error ends the read.
func TestReadFrameBodyGrowsWithArrival(t *testing.T) {
	const announced = 90 << 20
	for _, arrived := range []int{0, 10, frameGrowStep, 3*frameGrowStep + 7, 9 << 20} {
		body := bytes.Repeat([]byte{7}, arrived)
		var grown int
		grow := func(buf []byte, want int) ([]byte, error) {
			if limit := max(frameGrowStep, 2*len(buf)); want > limit || want > announced || len(buf) > arrived {
				t.Fatalf("arrived %d: grow to %d with %d read (limit %d)", arrived, want, len(buf), limit)
			}
			grown += want - cap(buf)
			return growCopy(buf, want)
		}
		_, err := ReadFrameBody(bufio.NewReader(bytes.NewReader(body)), make([]byte, 0, 64), announced, grow)
		if err != io.ErrUnexpectedEOF {
			t.Fatalf("arrived %d: err %v", arrived, err)
		}
		if grown > max(frameGrowStep, 2*arrived) {
			t.Errorf("arrived %d: buffer grew by %d", arrived, grown)
		}
	}
	// A buffer large enough is used as it is.
	buf := make([]byte, 0, 4<<20)
	got, err := ReadFrameBody(bufio.NewReader(bytes.NewReader(make([]byte, 3<<20))), buf, 3<<20,
		func([]byte, int) ([]byte, error) { t.Fatal("grew a buffer that fits"); return nil, nil })
	if err != nil || &got[0] != &buf[:1][0] {
		t.Fatalf("fitting frame: err %v, new buffer %v", err, err == nil && &got[0] != &buf[:1][0])
	}
	refused := errors.New("no memory")
	_, err = ReadFrameBody(bufio.NewReader(bytes.NewReader(make([]byte, 2<<20))), nil, 2<<20,
		func([]byte, int) ([]byte, error) { return nil, refused })
	if err != refused {
		t.Fatalf("grow error: got %v", err)
	}
}

func TestParseRequestHeader(t *testing.T) {
	for _, tc := range []struct {
		h    RequestHeader
		want int8
	}{
		{RequestHeader{APIKey: 7, APIVersion: 0, CorrelationID: 1}, 0},
		{RequestHeader{APIKey: KeyProduce, APIVersion: 8, CorrelationID: 2, ClientID: []byte("c")}, 1},
		{RequestHeader{APIKey: KeyProduce, APIVersion: 9, CorrelationID: 3, ClientID: []byte("client"), Tags: RawTags{1, 0, 1, 7}}, 2},
		{RequestHeader{APIKey: KeyMetadata, APIVersion: 1, CorrelationID: 4}, 1}, // null client id
		{RequestHeader{APIKey: KeyApiVersions, APIVersion: 3, CorrelationID: 5, ClientID: []byte{}}, 2},
		{RequestHeader{APIKey: 30000, APIVersion: 1, CorrelationID: 6, ClientID: []byte("x")}, 1}, // unknown key
	} {
		tc.h.HeaderVersion = tc.want
		frame := AppendRequestHeader(nil, &tc.h)
		frame = append(frame, 0xAB, 0xCD)
		got, body, err := ParseRequestHeader(frame, nil)
		if err != nil {
			t.Fatalf("%+v: %v", tc.h, err)
		}
		if got.HeaderVersion != tc.want || got.APIKey != tc.h.APIKey || got.APIVersion != tc.h.APIVersion ||
			got.CorrelationID != tc.h.CorrelationID || string(got.ClientID) != string(tc.h.ClientID) ||
			(got.ClientID == nil) != (tc.h.ClientID == nil) || string(got.Tags) != string(tc.h.Tags) {
			t.Fatalf("got %+v want %+v", got, tc.h)
		}
		if !bytes.Equal(body, []byte{0xAB, 0xCD}) {
			t.Fatalf("body %x", body)
		}
		// kmsg's request formatter produces the same header and body.
		if tc.h.APIKey == KeyProduce && tc.want == 1 {
			req := kmsg.NewPtrProduceRequest()
			req.Version = tc.h.APIVersion
			kf := kmsg.NewRequestFormatter(kmsg.FormatterClientID("c")).AppendRequest(nil, req, tc.h.CorrelationID)
			h2, body2, err := ParseRequestHeader(kf[4:], nil)
			if err != nil || h2.CorrelationID != 2 || string(h2.ClientID) != "c" {
				t.Fatalf("kmsg frame: %+v %v", h2, err)
			}
			var p ProduceRequest
			if err := p.Decode(h2.APIVersion, body2); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, short := range [][]byte{nil, {0, 1, 0}, {0, 0, 0, 1, 0, 0, 0, 1, 0, 9, 'a'}} {
		if _, _, err := ParseRequestHeader(short, nil); err == nil {
			t.Fatalf("short header %x accepted", short)
		}
	}
}

func TestFlexibleTable(t *testing.T) {
	keys := []int16{0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 32, 37, 42, 47, 60}
	for _, key := range keys {
		req := kmsg.RequestForKey(key)
		if req == nil {
			t.Fatalf("kmsg has no key %d", key)
		}
		for v := int16(0); v <= req.MaxVersion(); v++ {
			req.SetVersion(v)
			if IsFlexible(key, v) != req.IsFlexible() {
				t.Fatalf("key %d v%d: IsFlexible %v, kmsg %v", key, v, IsFlexible(key, v), req.IsFlexible())
			}
		}
	}
	if !IsFlexible(KeyApiVersions, 99) || IsFlexible(KeyApiVersions, 2) || IsFlexible(-1, 0) || IsFlexible(1000, 5) {
		t.Fatal("edge cases")
	}
	if FlexibleFrom(KeyProduce) != 9 || FlexibleFrom(KeyFetch) != 12 || FlexibleFrom(KeySaslHandshake) != -1 {
		t.Fatal("FlexibleFrom")
	}
}

func TestResponseHeader(t *testing.T) {
	if got := AppendResponseHeader(nil, KeyFetch, 12, 7); !bytes.Equal(got, []byte{0, 0, 0, 7, 0}) {
		t.Fatalf("fetch v12: %x", got)
	}
	if got := AppendResponseHeader(nil, KeyFetch, 11, 7); !bytes.Equal(got, []byte{0, 0, 0, 7}) {
		t.Fatalf("fetch v11: %x", got)
	}
	if got := AppendResponseHeader(nil, KeyApiVersions, 3, 7); !bytes.Equal(got, []byte{0, 0, 0, 7}) {
		t.Fatalf("apiversions v3 must have no tags: %x", got)
	}
}

func TestErrorCodesMatchKerr(t *testing.T) {
	for code, name := range errorNames {
		e := kerr.ErrorForCode(int16(code))
		ke, ok := e.(*kerr.Error)
		if code == CodeNone {
			if e != nil {
				t.Fatalf("kerr has an error for 0")
			}
			continue
		}
		renamed := map[string]string{"NOT_LEADER_OR_FOLLOWER": "NOT_LEADER_FOR_PARTITION"} // Kafka 2.7 rename
		if !ok || (ke.Message != name && ke.Message != renamed[name]) || ke.Code != int16(code) {
			t.Errorf("code %d: ours %s, kerr %v", code, name, e)
			continue
		}
		if code.Retriable() != ke.Retriable {
			t.Errorf("code %s: Retriable %v, kerr %v", name, code.Retriable(), ke.Retriable)
		}
	}
	if CodeUnsupportedVersion.String() != "UNSUPPORTED_VERSION" || ErrorCode(9999).String() != "ERROR_CODE_9999" {
		t.Fatal("String")
	}
}
