package zkproto

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func TestReadFrame(t *testing.T) {
	var stream []byte
	stream = AppendRequest(stream, RequestHeader{Xid: 1, Type: OpExists}, &ExistsRequest{Path: "/a"})
	stream = AppendRequest(stream, RequestHeader{Xid: XidPing, Type: OpPing}, nil)
	stream = AppendFrame(stream, &Empty{}) // a zero-length frame is valid
	br := bufio.NewReader(bytes.NewReader(stream))
	buf := make([]byte, 0, 64)
	rd := bytes.NewReader(stream)
	if a := testing.AllocsPerRun(10, func() {
		rd.Reset(stream)
		br.Reset(rd)
		for range 3 {
			if _, err := ReadFrame(br, buf, MaxBuffer); err != nil {
				t.Fatal(err)
			}
		}
	}); a != 0 {
		t.Fatalf("reading frames into a big enough buffer: %v allocations", a)
	}
	rd.Reset(stream)
	br.Reset(rd)
	for i, want := range []int{15, 8, 0} {
		b, err := ReadFrame(br, buf, MaxBuffer)
		if err != nil || len(b) != want {
			t.Fatalf("frame %d: %d bytes, %v", i, len(b), err)
		}
		if want > 0 && &b[0] != &buf[:1][0] {
			t.Fatalf("frame %d: buffer not reused", i)
		}
	}
	if _, err := ReadFrame(br, buf, MaxBuffer); err != io.EOF {
		t.Fatalf("clean end: %v, want io.EOF", err)
	}

	// Truncated in the length and in the body.
	for _, s := range [][]byte{{0, 0}, {0, 0, 0, 9, 1, 2}} {
		if _, err := ReadFrame(bufio.NewReader(bytes.NewReader(s)), nil, MaxBuffer); err != io.ErrUnexpectedEOF {
			t.Fatalf("%x: %v, want io.ErrUnexpectedEOF", s, err)
		}
	}

	// Lengths outside [0, max]: refused before allocation.
	for _, n := range []int32{-1, MaxBuffer + 1, 1 << 30} {
		s := binary.BigEndian.AppendUint32(nil, uint32(n))
		rd := bytes.NewReader(s)
		br := bufio.NewReaderSize(rd, 16)
		var err error
		allocs := testing.AllocsPerRun(10, func() {
			rd.Reset(s)
			br.Reset(rd)
			_, err = ReadFrame(br, nil, MaxBuffer)
		})
		var fe *FrameLengthError
		if !errors.As(err, &fe) || fe.Length != n {
			t.Fatalf("length %d: %v", n, err)
		}
		if allocs > 1 { // the *FrameLengthError
			t.Fatalf("length %d: %v allocations", n, allocs)
		}
	}
	if _, err := ReadFrame(bufio.NewReader(bytes.NewReader(AppendFrame(nil, &SyncRequest{Path: "/x"}))), nil, MaxBuffer); err != nil {
		t.Fatal(err)
	}
	// Exactly max is accepted.
	big := AppendFrame(nil, &GetSASLRequest{Token: make([]byte, MaxBuffer-4)})
	if b, err := ReadFrame(bufio.NewReader(bytes.NewReader(big)), nil, MaxBuffer); err != nil || len(b) != MaxBuffer {
		t.Fatalf("max-size frame: %d, %v", len(b), err)
	}

	// A four-letter word on a fresh connection reads as an oversize length.
	_, err := ReadFrame(bufio.NewReader(bytes.NewReader([]byte("ruok"))), nil, MaxBuffer)
	var fe *FrameLengthError
	if !errors.As(err, &fe) || fe.Word() != "ruok" {
		t.Fatalf("ruok: %v", err)
	}
}
