// Package kproto is zkafka's Kafka wire codec: request framing, request and
// response headers, flexible-version (KIP-482) primitives, hand-written
// zero-copy codecs for the hot-path APIs, a view over record batch v2 bytes,
// and thin kmsg helpers for everything else.
//
// # Framing
//
// Every request and response is a frame: a big-endian int32 size followed by
// that many bytes. Requests are read with ReadFrame (one reusable buffer per
// connection, capped by socket.request.max.bytes, DefaultMaxRequestBytes),
// or with ReadFrameSize and ReadFrameBody, whose GrowFunc lets the caller
// charge each growth of the buffer to a memory budget; a negative or
// oversize size is an error before anything is allocated, and the
// connection must then be closed. The buffer grows with the bytes that
// arrive, never on the size's word.
//
//	request:
//	+----------+---------+-------------+----------------+-----------------+------+------+
//	| size i32 | key i16 | version i16 | correlation i32| client_id str16 | tags | body |
//	+----------+---------+-------------+----------------+-----------------+------+------+
//	           |<- header v0 ------------------------->|
//	           |<- header v1 (most requests) ---------------------------->|
//	           |<- header v2 (flexible versions) -------------------------------->|
//
//	response:
//	+----------+----------------+------+------+
//	| size i32 | correlation i32| tags | body |
//	+----------+----------------+------+------+
//	           |<- header v0 -->|
//	           |<- header v1 (flexible) ->|   never for ApiVersions (key 18)
//
// Header v0 is only ControlledShutdown v0; v2 is used by every flexible
// (key, version) (IsFlexible, derived from kmsg); the client id stays an
// int16-length nullable string even in v2. Responses are built append-style:
// BeginFrame reserves the size, AppendResponseHeader writes the header, the
// body is appended, EndFrame patches the size.
//
// A connection loop looks like:
//
//	buf := make([]byte, 0, 64<<10)
//	for {
//		frame, err := kproto.ReadFrame(br, buf, kproto.DefaultMaxRequestBytes)
//		if err != nil { close }
//		hdr, body, err := kproto.ParseRequestHeader(frame, nil)
//		if err != nil { close }
//		switch hdr.APIKey {
//		case kproto.KeyProduce: err = produce.Decode(hdr.APIVersion, body)
//		...
//		default: req, err := kproto.DecodeKmsg(hdr.APIKey, hdr.APIVersion, body)
//		}
//		// handle, then reuse the buffer once nothing aliases it any more
//		buf = frame[:0]
//	}
//
// Decoded hot-path messages alias the frame (record bytes, client id, raw
// tag sections), so the frame buffer must not be reused while a request
// (for example a produce waiting for acks) still refers to it.
//
// # Primitives
//
// AppendX functions encode; Reader decodes with a sticky error checked once
// with Complete. Array lengths are checked against the bytes left (times
// the smallest element size) before any slice is allocated. Tagged-field
// sections are kept raw (RawTags), so decoded requests re-encode byte for
// byte and unknown tags cost nothing.
//
// # Versioning policy
//
// Hand-written here (zero-copy decode, append-style encode):
//
//	ApiVersions  v0-3   request and response, plus the v0-shaped
//	                    UNSUPPORTED_VERSION reply (ApiVersionsReplyVersion)
//	Produce      v0-10  request (records are subslices) and response
//	Fetch        v0-13  request (sessions, forgotten topics, topic ids) and
//	                    a sendfile-friendly response (FetchResponseWriter)
//	Metadata     v0-12  request and response (topic ids from v10)
//	ListOffsets  v0-7   request and response
//
// The *MaxVersion constants give those ranges; decoders return *VersionError
// outside them. Everything else (groups, offsets, admin, InitProducerId,
// OffsetForLeaderEpoch, DescribeConfigs, CreateTopics, ...) uses franz-go's
// generated kmsg types through DecodeKmsg and AppendKmsgResponse: those APIs
// carry no record bytes, so the allocation of kmsg's structs does not matter.
// The flexible-version table is derived from kmsg as well. Tests cross-check
// every hand-written version against kmsg in both directions.
//
// # Record batches
//
// Batch is a view over one record batch (magic 2); see batch.go for the
// byte layout. SplitBatches walks a produce request's record set,
// recognising legacy magic 0/1 message sets so the broker can reject them.
// The broker rewrites only base offset, leader epoch and, for LogAppendTime
// topics, max timestamp (SetMaxTimestampAndType recomputes the CRC). Records
// and ValidateBatch decompress (gzip, snappy raw or Xerial, lz4 frame, zstd)
// only to validate; uncompressed batches are read in place.
package kproto
