package kproto

// ApiVersions (key 18), versions 0-3. Flexible from v3; the response header is
// always v0 (see AppendResponseHeader).
//
// A client that asks a version newer than the broker's gets a reply encoded
// at v0 with error UNSUPPORTED_VERSION and the full api_versions array, and
// then retries with a version from that array (KIP-511; librdkafka sends v3
// first and falls back). Use ApiVersionsReplyVersion to pick the version.

// ApiVersionsRequest is an ApiVersions request.
type ApiVersionsRequest struct {
	Version int16
	// ClientSoftwareName and ClientSoftwareVersion are v3+.
	ClientSoftwareName    string
	ClientSoftwareVersion string
	Tags                  RawTags
}

// Decode parses body at version, reusing r.
func (r *ApiVersionsRequest) Decode(version int16, body []byte) error {
	if err := checkVersion(KeyApiVersions, version, ApiVersionsMaxVersion); err != nil {
		return err
	}
	flex := version >= 3
	b := Reader{Src: body}
	*r = ApiVersionsRequest{Version: version}
	if version >= 3 {
		r.ClientSoftwareName = b.CompactString()
		r.ClientSoftwareVersion = b.CompactString()
	}
	r.Tags = b.FlexTags(flex)
	return b.Complete()
}

// AppendTo appends the request body at r.Version.
func (r *ApiVersionsRequest) AppendTo(dst []byte) []byte {
	flex := r.Version >= 3
	if r.Version >= 3 {
		dst = AppendCompactString(dst, r.ClientSoftwareName)
		dst = AppendCompactString(dst, r.ClientSoftwareVersion)
	}
	return appendFlexTags(dst, r.Tags, flex)
}

// ApiVersionsRange is one supported key with its version range.
type ApiVersionsRange struct {
	APIKey     int16
	MinVersion int16
	MaxVersion int16
}

// ApiVersionsResponse is an ApiVersions response.
type ApiVersionsResponse struct {
	ErrorCode      ErrorCode
	APIKeys        []ApiVersionsRange
	ThrottleMillis int32 // v1+
	// Tags is the top-level tag section (v3+): supported and finalized
	// features. zkafka sends none.
	Tags RawTags
}

// ApiVersionsReplyVersion returns the version to encode the reply to a
// request of version requested: requested itself when supported, else 0.
func ApiVersionsReplyVersion(requested int16) int16 {
	if requested < 0 || requested > ApiVersionsMaxVersion {
		return 0
	}
	return requested
}

// AppendTo appends the response body at version (0-3).
func (r *ApiVersionsResponse) AppendTo(dst []byte, version int16) []byte {
	flex := version >= 3
	dst = AppendInt16(dst, int16(r.ErrorCode))
	dst = AppendArrayLen(dst, len(r.APIKeys), flex)
	for _, k := range r.APIKeys {
		dst = AppendInt16(dst, k.APIKey)
		dst = AppendInt16(dst, k.MinVersion)
		dst = AppendInt16(dst, k.MaxVersion)
		dst = appendFlexTags(dst, nil, flex)
	}
	if version >= 1 {
		dst = AppendInt32(dst, r.ThrottleMillis)
	}
	return appendFlexTags(dst, r.Tags, flex)
}
