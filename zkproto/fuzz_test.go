package zkproto

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
)

// allOpcodes lists every opcode FuzzDecodeRequest seeds, known or not.
var allOpcodes = []OpCode{
	OpNotification, OpCreate, OpDelete, OpExists, OpGetData, OpSetData, OpGetACL, OpSetACL,
	OpGetChildren, OpSync, OpPing, OpGetChildren2, OpCheck, OpMulti, OpCreate2, OpReconfig,
	OpCheckWatches, OpRemoveWatches, OpCreateContainer, OpDeleteContainer, OpCreateTTL,
	OpMultiRead, OpAuth, OpSetWatches, OpSASL, OpGetEphemerals, OpGetAllChildrenNumber,
	OpSetWatches2, OpAddWatch, OpWhoAmI, OpCreateSession, OpCloseSession, OpError, 10, 999,
}

// checkRecode decodes body into rec and, if that succeeds, checks that the
// encoding is exactly as long as what was consumed and decodes to rec again.
func checkRecode(t *testing.T, rec Record, body []byte) bool {
	t.Helper()
	r := NewReader(body)
	rec.Decode(r)
	if r.Err() != nil {
		return false
	}
	consumed := len(body) - r.Len()
	enc := rec.Append(nil)
	if len(enc) != consumed {
		t.Fatalf("%T: consumed %d bytes, re-encodes to %d\nin  %x\nout %x", rec, consumed, len(enc), body, enc)
	}
	again := reflect.New(reflect.TypeOf(rec).Elem()).Interface().(Record)
	r = NewReader(enc)
	again.Decode(r)
	if err := r.Complete(); err != nil {
		t.Fatalf("%T: re-decoding %x: %v", rec, enc, err)
	}
	if !reflect.DeepEqual(again, rec) {
		t.Fatalf("%T: re-decoded\n %+v\nwant %+v", rec, again, rec)
	}
	return true
}

func FuzzDecodeRequest(f *testing.F) {
	for op, rec := range requestSamples() {
		f.Add(int32(op), rec.Append(nil))
	}
	for _, op := range allOpcodes {
		f.Add(int32(op), []byte{0, 0, 0, 1, '/', 1, 0, 0, 0, 0})
	}
	f.Fuzz(func(t *testing.T, op int32, body []byte) {
		rec, err := DecodeRequest(OpCode(op), body)
		if NewRequest(OpCode(op)) == nil {
			if !errors.Is(err, ErrUnknownOpcode) {
				t.Fatalf("op %d: err %v, want ErrUnknownOpcode", op, err)
			}
			return
		}
		if err != nil {
			return
		}
		if !checkRecode(t, NewRequest(OpCode(op)), body) {
			t.Fatalf("op %d: DecodeRequest succeeded, Decode failed", op)
		}
		again, err := DecodeRequest(OpCode(op), rec.Append(nil))
		if err != nil || !reflect.DeepEqual(again, rec) {
			t.Fatalf("op %d: re-decoding: %v\n got %+v\nwant %+v", op, err, again, rec)
		}
	})
}

func FuzzConnectRequest(f *testing.F) {
	for _, c := range []ConnectRequest{
		{TimeOut: 30000, Passwd: make([]byte, 16)},
		{TimeOut: 30000, Passwd: make([]byte, 16), HasReadOnly: true, ReadOnly: true},
		{SessionID: 5, LastZxidSeen: 9},
	} {
		f.Add(c.Append(nil))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var c ConnectRequest
		if !checkRecode(t, &c, body) {
			return
		}
		// The readOnly byte is present exactly when a byte follows passwd.
		base := 4 + 8 + 4 + 8 + 4 + len(c.Passwd)
		if c.HasReadOnly != (len(body) > base) {
			t.Fatalf("HasReadOnly %v for %d bytes with a %d-byte base", c.HasReadOnly, len(body), base)
		}
		var resp ConnectResponse
		checkRecode(t, &resp, body)
	})
}

func FuzzMulti(f *testing.F) {
	for _, tc := range roundTripCases() {
		switch tc.rec.(type) {
		case *MultiRequest, *MultiResponse:
			f.Add(tc.rec.Append(nil))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req MultiRequest
		if checkRecode(t, &req, body) {
			for i, op := range req.Ops {
				if i > 0 && IsReadOp(op.Type) != IsReadOp(req.Ops[0].Type) {
					t.Fatalf("mixed multi decoded: %+v", req.Ops)
				}
				if reflect.TypeOf(op.Op) != reflect.TypeOf(NewMultiOp(op.Type)) {
					t.Fatalf("op %d has record %T", op.Type, op.Op)
				}
			}
		}
		var resp MultiResponse
		checkRecode(t, &resp, body)
	})
}

// chunkReader delivers its data in pseudo-random pieces of 1..8 bytes.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(1+c.rng.IntN(8), len(p), len(c.data))
	n = copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

type frameResult struct {
	body []byte
	err  string
}

func readFrames(r io.Reader, max int) []frameResult {
	br := bufio.NewReaderSize(r, 16)
	var out []frameResult
	buf := make([]byte, 0, 8)
	for {
		b, err := ReadFrame(br, buf, max)
		if err != nil {
			return append(out, frameResult{err: err.Error()})
		}
		out = append(out, frameResult{body: append([]byte(nil), b...)})
		buf = b
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add(AppendRequest(AppendFrame(nil, &SyncRequest{Path: "/a"}), RequestHeader{Xid: 1}, nil), uint16(64), uint64(1))
	f.Add([]byte("ruok"), uint16(64), uint64(2))
	f.Add([]byte{0, 0, 0, 65, 1}, uint16(64), uint64(3))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint16(64), uint64(4))
	f.Fuzz(func(t *testing.T, stream []byte, max uint16, seed uint64) {
		whole := readFrames(bytes.NewReader(stream), int(max))
		split := readFrames(&chunkReader{data: stream, rng: rand.New(rand.NewPCG(seed, 0))}, int(max))
		if !reflect.DeepEqual(whole, split) {
			t.Fatalf("split delivery differs:\n whole %v\n split %v", whole, split)
		}
		// Reference: walk the stream by hand.
		rest := stream
		for i, fr := range whole {
			if fr.err != "" {
				if i != len(whole)-1 {
					t.Fatal("error before the last result")
				}
				break
			}
			if len(rest) < 4 {
				t.Fatalf("frame %d read from %d bytes", i, len(rest))
			}
			n := int32(binary.BigEndian.Uint32(rest))
			if n < 0 || int(n) > int(max) || int(n) > len(rest)-4 || !bytes.Equal(fr.body, rest[4:4+n]) {
				t.Fatalf("frame %d: body %x, stream %x", i, fr.body, rest)
			}
			rest = rest[4+n:]
		}
		if last := whole[len(whole)-1]; len(rest) == 0 && last.err != io.EOF.Error() {
			t.Fatalf("stream consumed, last error %q", last.err)
		}
	})
}
