package quorum

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// peerBufReader is a reader over b as the transport reads a connection.
func peerBufReader(b []byte) *bufio.Reader { return bufio.NewReaderSize(bytes.NewReader(b), 4096) }

// fuzzLimits are small limits, so that the fuzzer reaches them.
var fuzzLimits = peerLimits{entry: 1 << 10, frame: 2 << 10, snapshot: 8 << 10}

// decodedFrame is one frame as the receiver takes it.
type decodedFrame struct {
	kind byte
	size int // the body's length
	item peerItem
	err  error // decodePeerFrame's
}

// readPeerFrames reads frames from r until the first read error, as the
// transport does after a hello.
func readPeerFrames(r io.Reader, limits peerLimits) ([]decodedFrame, error) {
	fr := &peerFrameReader{br: bufio.NewReaderSize(r, 4096), limits: limits}
	var out []decodedFrame
	for {
		kind, body, err := fr.next()
		if err != nil {
			return out, err
		}
		it, derr := decodePeerFrame(kind, body, limits)
		out = append(out, decodedFrame{kind: kind, size: len(body), item: it, err: derr})
		if derr != nil {
			return out, derr
		}
	}
}

// FuzzPeerFrame feeds arbitrary bytes to the peer frame reader and
// decoder. Invariants: no panic; a frame is never longer than the limits
// allow, and one longer than limits.frame is a MsgSnap; the frames read
// never add up to more than the input; reading the input one byte at a
// time gives the same frames (split delivery); and every frame that
// decodes re-encodes to a frame that decodes to the same thing.
func FuzzPeerFrame(f *testing.F) {
	typ, from, to := raftpb.MsgApp, uint64(2), uint64(1)
	app := &raftpb.Message{Type: &typ, From: &from, To: &to, Entries: []*raftpb.Entry{{Data: []byte("txn")}}}
	snapType := raftpb.MsgSnap
	snap := &raftpb.Message{Type: &snapType, From: &from, To: &to, Snapshot: &raftpb.Snapshot{Data: make([]byte, 3<<10)}}
	seed := appendPeerFrame(nil, peerItem{msg: app})
	seed = appendPeerFrame(seed, peerItem{touches: []sessionTouch{{id: 7, timeout: 4 * time.Second}}})
	f.Add(seed)
	f.Add(appendPeerFrame(nil, peerItem{msg: snap}))
	f.Add(binary.BigEndian.AppendUint32(nil, 1<<30))
	f.Add([]byte{0, 0, 0, 3, 1, 0x08, byte(raftpb.MsgSnap)})
	f.Add([]byte{0, 0, 0x10, 0, 1, 0x08, byte(raftpb.MsgSnap), 0xff})
	f.Add([]byte{0, 0, 0, 5, 2, 0, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 1, 9})
	f.Fuzz(func(t *testing.T, in []byte) {
		frames, err := readPeerFrames(bytes.NewReader(in), fuzzLimits)
		if err == nil {
			t.Fatal("reading ended without an error")
		}
		consumed := 0
		for _, fr := range frames {
			consumed += 4 + 1 + fr.size
			if 1+fr.size > fuzzLimits.snapshot {
				t.Fatalf("a frame of %d bytes passed the snapshot limit %d", 1+fr.size, fuzzLimits.snapshot)
			}
			if 1+fr.size > fuzzLimits.frame && fr.err == nil && fr.item.msg.GetType() != raftpb.MsgSnap {
				t.Fatalf("a %s frame of %d bytes passed the frame limit %d", fr.item.msg.GetType(), 1+fr.size, fuzzLimits.frame)
			}
		}
		if consumed > len(in) {
			t.Fatalf("frames of %d bytes from %d bytes of input", consumed, len(in))
		}

		split, splitErr := readPeerFrames(iotest.OneByteReader(bytes.NewReader(in)), fuzzLimits)
		if len(split) != len(frames) || errors.Is(err, io.EOF) != errors.Is(splitErr, io.EOF) {
			t.Fatalf("byte by byte: %d frames (%v), whole: %d frames (%v)", len(split), splitErr, len(frames), err)
		}
		for i := range frames {
			if !sameDecoded(frames[i], split[i]) {
				t.Fatalf("frame %d differs when read byte by byte", i)
			}
		}

		for _, fr := range frames {
			if fr.err != nil {
				continue
			}
			again, _ := readPeerFrames(bytes.NewReader(appendPeerFrame(nil, fr.item)), fuzzLimits)
			if len(again) == 0 || again[0].err != nil || !sameDecoded(fr, again[0]) {
				t.Fatalf("a decoded frame does not survive re-encoding: %+v", fr)
			}
		}
	})
}

func sameDecoded(a, b decodedFrame) bool {
	if a.kind != b.kind || (a.err == nil) != (b.err == nil) {
		return false
	}
	if a.err != nil {
		return true
	}
	if a.item.msg != nil || b.item.msg != nil {
		return proto.Equal(a.item.msg, b.item.msg)
	}
	if len(a.item.touches) != len(b.item.touches) {
		return false
	}
	for i := range a.item.touches {
		if a.item.touches[i] != b.item.touches[i] {
			return false
		}
	}
	return true
}
