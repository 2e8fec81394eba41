package broker

import "github.com/zkafka/zkafka/kproto"

// ApiVersions (key 18), v0-3, kproto's hand-written codec.
//
// The advertised table is built from the registry (registry.go): every
// regKey call, nothing else. A request at a version newer than 3 gets
// the KIP-511 reply: encoded at v0, error UNSUPPORTED_VERSION, with the
// full table, and the connection stays open (librdkafka sends v3 first
// and falls back; franz-go sends v5 first).
//
// Not implemented: supported/finalized features (tags, v3+), which Kafka
// sends only for KRaft features clients here do not use.

func init() { regKey(kproto.KeyApiVersions, 0, kproto.ApiVersionsMaxVersion, handleApiVersions) }

func handleApiVersions(c *conn, hdr *kproto.RequestHeader, body []byte) (*response, error) {
	var req kproto.ApiVersionsRequest
	if err := req.Decode(hdr.APIVersion, body); err != nil {
		// Kafka answers INVALID_REQUEST for a v3+ body it cannot parse.
		return apiVersionsReply(hdr, hdr.APIVersion, kproto.ErrorCode(42)), nil
	}
	return apiVersionsReply(hdr, hdr.APIVersion, kproto.CodeNone), nil
}

// apiVersionsUnsupported is the v0-shaped reply to a version too new.
func apiVersionsUnsupported(hdr *kproto.RequestHeader) *response {
	return apiVersionsReply(hdr, kproto.ApiVersionsReplyVersion(hdr.APIVersion), kproto.CodeUnsupportedVersion)
}

func apiVersionsReply(hdr *kproto.RequestHeader, version int16, code kproto.ErrorCode) *response {
	resp := kproto.ApiVersionsResponse{ErrorCode: code, APIKeys: advertisedVersions()}
	h := *hdr
	h.APIVersion = version
	return frame(&h, func(dst []byte) []byte { return resp.AppendTo(dst, version) })
}
