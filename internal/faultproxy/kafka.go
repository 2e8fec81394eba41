package faultproxy

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxFrame bounds a request frame the proxy reads whole: Kafka's
// socket.request.max.bytes default (100 MiB).
const maxFrame = 100 << 20

// readFrame reads one Kafka request frame, its int32 size included.
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 0 || n > maxFrame {
		return nil, errors.New("faultproxy: request frame size out of range")
	}
	frame := make([]byte, 4+n)
	copy(frame, size[:])
	_, err := io.ReadFull(r, frame[4:])
	return frame, err
}

// request is what the proxy reads of a request frame: its client id and,
// for a Fetch, the replica id it carries (-1 from a consumer, or when the
// frame is not a Fetch or does not decode).
type request struct {
	clientID string
	replica  int32
}

// parseRequest reads frame's header (api key, version, correlation id,
// client id, and the tagged fields of a flexible header) and, for a
// Fetch, decodes the body with kmsg for ReplicaID (v0-v14) or
// ReplicaState.ID (v15+, KIP-903).
func parseRequest(frame []byte) request {
	out := request{replica: -1}
	if len(frame) < 4 {
		return out
	}
	r := kbin.Reader{Src: frame[4:]}
	key, version := r.Int16(), r.Int16()
	r.Int32()
	if id := r.NullableString(); id != nil {
		out.clientID = *id
	}
	if !r.Ok() || key != 1 {
		return out
	}
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(version)
	if req.IsFlexible() {
		for n := r.Uvarint(); n > 0 && r.Ok(); n-- {
			r.Uvarint()
			r.Span(int(r.Uvarint()))
		}
	}
	if !r.Ok() || req.ReadFrom(r.Src) != nil {
		return out
	}
	out.replica = req.ReplicaID
	if version >= 15 {
		out.replica = req.ReplicaState.ID
	}
	return out
}
