package quorum

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Peer frames (see transport.go for the connection):
//
//	frame:  length (4, of what follows) | kind (1) | body
//	        kind 1: a marshalled raftpb.Message
//	        kind 2: session activity: count (4) | count × (session (8) | timeout ms (4))
//
// Every frame is bounded (peerLimits). A frame that carries a raft MsgSnap
// holds the whole snapshot (raftnode sends the snapshot file's bytes in
// Snapshot.Data), so it may be as long as zkafka.peer.maxSnapshotBytes;
// any other frame is bounded by what raft puts in one message. A reader
// tells a MsgSnap from its first body bytes, before reading the rest: Go's
// protobuf encoder writes fields in field-number order, so a raftpb.Message
// opens with field 1, its type. And a body is read, and its buffer grown,
// one peerChunk at a time, so that memory follows the bytes that arrived,
// not the length a prefix claims.
const (
	frameRaft     = 1
	frameSessions = 2

	// raftMaxMsgBytes is raftnode's raft.Config.MaxSizePerMsg: a MsgApp
	// carries entries up to this size, or a single larger entry.
	raftMaxMsgBytes = 1 << 20
	// peerFrameSlack covers a message's fields around its entries (and
	// raftnode's 16-byte entry header, a txn's fields around a request).
	peerFrameSlack = 64 << 10
	// peerChunk is how much of a frame body is read (and allocated) at a
	// time; a connection keeps a buffer up to this size between frames.
	peerChunk = 1 << 20
	// touchBytes is one session's activity in a sessions frame.
	touchBytes = 12

	// PeerMaxSnapshotKey is the zoo.cfg key of the snapshot bound.
	PeerMaxSnapshotKey = "zkafka.peer.maxSnapshotBytes"
	// DefaultPeerMaxSnapshot is its default: a snapshot file (the data
	// tree and sessions) of up to 1 GiB can be sent to a lagging peer.
	DefaultPeerMaxSnapshot = 1 << 30
	minPeerMaxSnapshot     = 1 << 20
	maxPeerMaxSnapshot     = 1<<32 - 1 // the length prefix is 32 bits
)

// peerLimits bound what one peer frame may hold; every server of an
// ensemble derives the same limits from the same zoo.cfg.
type peerLimits struct {
	// entry bounds the data of one proposal: a txn is one client request
	// (at most jute.maxbuffer) plus the session's identities, so twice
	// that is ample. Proposals over it fail, since no peer would take the
	// MsgApp that carries them.
	entry int
	// frame bounds a frame (kind and body) that is not a MsgSnap: one
	// raft message, at most raftMaxMsgBytes of entries or a single entry.
	frame int
	// snapshot bounds a frame that carries a MsgSnap.
	snapshot int
}

func newPeerLimits(juteMaxBuffer, maxSnapshot int) peerLimits {
	entry := 2*juteMaxBuffer + peerFrameSlack
	frame := max(raftMaxMsgBytes, entry) + peerFrameSlack
	if maxSnapshot <= 0 {
		maxSnapshot = DefaultPeerMaxSnapshot
	}
	return peerLimits{entry: entry, frame: frame, snapshot: max(maxSnapshot, frame)}
}

// maxTouches is how many sessions one sessions frame may carry.
func (l peerLimits) maxTouches() int { return (l.frame - 1 - 4) / touchBytes }

var (
	errPeerFrameEmpty   = errors.New("empty peer frame")
	errPeerFrameLarge   = errors.New("peer frame over the limit of a raft message")
	errPeerSnapshotSize = errors.New("peer snapshot over " + PeerMaxSnapshotKey)
	errPeerFrameKind    = errors.New("unknown peer frame kind")
	errPeerSessions     = errors.New("malformed sessions frame")
)

func appendPeerFrame(dst []byte, it peerItem) []byte {
	dst = append(dst, 0, 0, 0, 0)
	if it.msg != nil {
		dst = append(dst, frameRaft)
		var err error
		dst, err = proto.MarshalOptions{}.MarshalAppend(dst, it.msg)
		if err != nil {
			panic(fmt.Sprintf("quorum: marshal raft message: %v", err))
		}
	} else {
		dst = append(dst, frameSessions)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(it.touches)))
		for _, ts := range it.touches {
			dst = binary.BigEndian.AppendUint64(dst, uint64(ts.id))
			dst = binary.BigEndian.AppendUint32(dst, uint32(ts.timeout/time.Millisecond))
		}
	}
	binary.BigEndian.PutUint32(dst, uint32(len(dst)-4))
	return dst
}

// checkOutgoing reports why the peer at the other end would refuse a
// frame built by appendPeerFrame (nil if it would take it).
func (l peerLimits) checkOutgoing(frame []byte, it peerItem) error {
	n := len(frame) - 4
	switch {
	case it.msg != nil && it.msg.GetType() == raftpb.MsgSnap:
		if n > l.snapshot {
			return fmt.Errorf("%w (%d bytes, limit %d)", errPeerSnapshotSize, n, l.snapshot)
		}
	case n > l.frame:
		return fmt.Errorf("%w (%d bytes, limit %d)", errPeerFrameLarge, n, l.frame)
	}
	return nil
}

// peerFrameReader reads the frames of one peer connection after its hello.
type peerFrameReader struct {
	br     *bufio.Reader
	limits peerLimits
	// buf is reused for bodies up to peerChunk; larger ones get their own.
	buf []byte
	// beforeChunk, when set, runs before each chunk of a body longer than
	// peerChunk is read (the transport renews the read deadline there, so a
	// peer that stalls inside a big frame is dropped).
	beforeChunk func()
}

// next reads one frame and returns its kind and body. The body is valid
// until the next call. A length over the limits fails before anything is
// allocated for it.
func (r *peerFrameReader) next() (kind byte, body []byte, err error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r.br, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := int64(binary.BigEndian.Uint32(hdr[:]))
	switch {
	case n < 1:
		return 0, nil, errPeerFrameEmpty
	case n > int64(r.limits.frame):
		if n > int64(r.limits.snapshot) {
			return 0, nil, fmt.Errorf("%w: %d bytes, limit %d", errPeerSnapshotSize, n, r.limits.snapshot)
		}
		// Only a MsgSnap may be that long: its kind, tag and type come first.
		if r.beforeChunk != nil {
			r.beforeChunk()
		}
		head, err := r.br.Peek(int(min(n, 3)))
		if err != nil {
			return 0, nil, err
		}
		if head[0] != frameRaft || !opensMsgSnap(head[1:]) {
			return 0, nil, fmt.Errorf("%w: %d bytes, limit %d", errPeerFrameLarge, n, r.limits.frame)
		}
	}
	kind, err = r.br.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	body, err = r.readBody(int(n - 1))
	return kind, body, err
}

// readBody reads n bytes, growing the buffer only as they arrive.
func (r *peerFrameReader) readBody(n int) ([]byte, error) {
	if n <= peerChunk {
		if cap(r.buf) < n {
			r.buf = make([]byte, n)
		}
		b := r.buf[:n]
		_, err := io.ReadFull(r.br, b)
		return b, err
	}
	b := make([]byte, 0, peerChunk)
	for len(b) < n {
		if r.beforeChunk != nil {
			r.beforeChunk()
		}
		m := min(n-len(b), peerChunk)
		b = slices.Grow(b, m)
		k, err := io.ReadFull(r.br, b[len(b):len(b)+m])
		b = b[:len(b)+k]
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// opensMsgSnap reports whether a marshalled raftpb.Message starts with
// its type field (field 1, a varint) set to MsgSnap, in the two bytes Go's
// encoder writes for it.
func opensMsgSnap(b []byte) bool {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != 1 || typ != protowire.VarintType {
		return false
	}
	v, m := protowire.ConsumeVarint(b[n:])
	return m > 0 && v == uint64(raftpb.MsgSnap)
}

// decodePeerFrame decodes a frame's body into what it carries. A raft
// message longer than limits.frame must be a MsgSnap.
func decodePeerFrame(kind byte, body []byte, limits peerLimits) (peerItem, error) {
	switch kind {
	case frameRaft:
		m := &raftpb.Message{}
		if err := proto.Unmarshal(body, m); err != nil {
			return peerItem{}, fmt.Errorf("undecodable raft message: %w", err)
		}
		if 1+len(body) > limits.frame && m.GetType() != raftpb.MsgSnap {
			return peerItem{}, fmt.Errorf("%w: a %s of %d bytes", errPeerFrameLarge, m.GetType(), 1+len(body))
		}
		return peerItem{msg: m}, nil
	case frameSessions:
		ts, ok := decodeTouches(body)
		if !ok {
			return peerItem{}, errPeerSessions
		}
		return peerItem{touches: ts}, nil
	}
	return peerItem{}, fmt.Errorf("%w %d", errPeerFrameKind, kind)
}

func decodeTouches(b []byte) ([]sessionTouch, bool) {
	if len(b) < 4 {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(b))
	b = b[4:]
	if n > len(b)/touchBytes || len(b) != n*touchBytes {
		return nil, false
	}
	out := make([]sessionTouch, n)
	for i := range out {
		out[i].id = int64(binary.BigEndian.Uint64(b))
		out[i].timeout = time.Duration(binary.BigEndian.Uint32(b[8:])) * time.Millisecond
		b = b[touchBytes:]
	}
	return out, true
}
