package kproto

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The long tail of APIs (groups, admin, InitProducerId, OffsetForLeaderEpoch,
// DescribeConfigs, CreateTopics, ...) is decoded and encoded with franz-go's
// generated kmsg types. They allocate and copy strings, which is fine for
// these APIs; none of them carries record bytes.

// ErrUnknownKey is returned by DecodeKmsg for an API key kmsg does not know.
var ErrUnknownKey = fmt.Errorf("kproto: unknown api key")

// DecodeKmsg decodes a request body (from ParseRequestHeader) of the given
// key and version with kmsg. Strings are copied, so the result stays valid
// after the frame buffer is reused. Versions newer than kmsg knows return a
// *VersionError. kmsg ignores trailing bytes (the hand-written decoders
// report ErrTrailingBytes).
func DecodeKmsg(key, version int16, body []byte) (kmsg.Request, error) {
	req := kmsg.RequestForKey(key)
	if req == nil {
		return nil, fmt.Errorf("%w %d", ErrUnknownKey, key)
	}
	if version < 0 || version > req.MaxVersion() {
		return nil, &VersionError{Key: key, Version: version}
	}
	req.SetVersion(version)
	if err := req.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("kproto: decoding %s v%d: %w", kmsg.NameForKey(key), version, err)
	}
	return req, nil
}

// AppendKmsgResponse appends resp's body at resp.GetVersion(), which the
// caller sets to the request's version (req.ResponseKind() does).
func AppendKmsgResponse(dst []byte, resp kmsg.Response) []byte {
	return resp.AppendTo(dst)
}

// AppendKmsgResponseFrame appends a whole response frame: size prefix,
// response header for (resp.Key(), resp.GetVersion()) and body.
func AppendKmsgResponseFrame(dst []byte, correlationID int32, resp kmsg.Response) []byte {
	dst, start := BeginFrame(dst)
	dst = AppendResponseHeader(dst, resp.Key(), resp.GetVersion(), correlationID)
	dst = resp.AppendTo(dst)
	EndFrame(dst, start, 0)
	return dst
}
