package kproto

import "fmt"

// Fetch responses for sendfile.
//
// A Fetch response is written as alternating parts: bytes built in a buffer,
// then a run of record bytes that the broker sends straight from a segment
// file, then more buffer bytes, and so on:
//
//	Buf[0:Holes[0].At]          write from memory (size, header, ... records length)
//	Holes[0].Len record bytes   sendfile from the segment
//	Buf[Holes[0].At:Holes[1].At] write from memory (tags, next partition ... length)
//	...
//	Buf[Holes[n-1].At:]         write from memory (trailing tags)
//
// The frame size written by Finish counts the record bytes, so the broker
// must know every partition's byte range before it starts writing.
//
// Per partition, the low-level pieces are AppendFetchPartitionHeader (all
// fields up to and including the records length: int32, or uvarint len+1
// when flexible) and AppendFetchPartitionTrailer (the tag section, flexible
// versions only). FetchResponseWriter strings them together.

// FetchResponseHead holds the top-level fields of a Fetch response.
type FetchResponseHead struct {
	ThrottleMillis int32     // v1+
	ErrorCode      ErrorCode // v7+: the session-level error
	SessionID      int32     // v7+
}

// FetchPartitionResponse holds one partition's fields, except the records.
type FetchPartitionResponse struct {
	Partition        int32
	ErrorCode        ErrorCode
	HighWatermark    int64
	LastStableOffset int64 // v4+
	LogStartOffset   int64 // v5+
	// AbortedTransactions is v4+; nil encodes as null (what Kafka sends for
	// read_uncommitted fetches).
	AbortedTransactions  []FetchAbortedTransaction
	PreferredReadReplica int32 // v11+; -1 for none
	// Tags is the partition tag section (v12+), e.g. CurrentLeader (tag 1)
	// with NOT_LEADER_OR_FOLLOWER; nil for none.
	Tags RawTags
}

// FetchAbortedTransaction is one aborted transaction in the fetched range.
type FetchAbortedTransaction struct {
	ProducerID  int64
	FirstOffset int64
}

// AppendFetchResponseHead appends the top-level fields and the topics array
// length of a Fetch response body at version.
func AppendFetchResponseHead(dst []byte, version int16, h *FetchResponseHead, numTopics int) []byte {
	if version >= 1 {
		dst = AppendInt32(dst, h.ThrottleMillis)
	}
	if version >= 7 {
		dst = AppendInt16(dst, int16(h.ErrorCode))
		dst = AppendInt32(dst, h.SessionID)
	}
	return AppendArrayLen(dst, numTopics, version >= 12)
}

// AppendFetchTopicHead appends a topic's name (v0-12) or id (v13+) and its
// partitions array length.
func AppendFetchTopicHead(dst []byte, version int16, topic string, topicID [16]byte, numPartitions int) []byte {
	flex := version >= 12
	if version >= 13 {
		dst = AppendUUID(dst, topicID)
	} else {
		dst = AppendFlexString(dst, topic, flex)
	}
	return AppendArrayLen(dst, numPartitions, flex)
}

// AppendFetchTopicTrailer appends what follows a topic's partitions (its tag
// section in flexible versions).
func AppendFetchTopicTrailer(dst []byte, version int16) []byte {
	return appendFlexTags(dst, nil, version >= 12)
}

// AppendFetchResponseTrailer appends what follows the topics (the top-level
// tag section in flexible versions).
func AppendFetchResponseTrailer(dst []byte, version int16) []byte {
	return appendFlexTags(dst, nil, version >= 12)
}

// AppendFetchPartitionHeader appends a partition's fields through the length
// prefix of its records; the caller then sends exactly recordsLen record
// bytes and appends AppendFetchPartitionTrailer.
func AppendFetchPartitionHeader(dst []byte, version int16, p *FetchPartitionResponse, recordsLen int) []byte {
	flex := version >= 12
	dst = AppendInt32(dst, p.Partition)
	dst = AppendInt16(dst, int16(p.ErrorCode))
	dst = AppendInt64(dst, p.HighWatermark)
	if version >= 4 {
		dst = AppendInt64(dst, p.LastStableOffset)
	}
	if version >= 5 {
		dst = AppendInt64(dst, p.LogStartOffset)
	}
	if version >= 4 {
		a := p.AbortedTransactions
		dst = AppendNullableArrayLen(dst, len(a), a == nil, flex)
		for _, t := range a {
			dst = AppendInt64(dst, t.ProducerID)
			dst = AppendInt64(dst, t.FirstOffset)
			dst = appendFlexTags(dst, nil, flex)
		}
	}
	if version >= 11 {
		dst = AppendInt32(dst, p.PreferredReadReplica)
	}
	return AppendBytesLen(dst, recordsLen, flex)
}

// AppendFetchPartitionTrailer appends what follows a partition's records.
func AppendFetchPartitionTrailer(dst []byte, version int16, p *FetchPartitionResponse) []byte {
	return appendFlexTags(dst, p.Tags, version >= 12)
}

// Hole marks where Len record bytes go: after Buf[:At] and before Buf[At:].
type Hole struct {
	At  int
	Len int
}

// FetchResponseWriter builds a complete Fetch response frame (size prefix,
// response header and body) with holes for record bytes. Use it as:
//
//	w.Begin(buf[:0], version, correlationID, &head, len(topics))
//	for each topic:     w.Topic(name, id, len(partitions))
//	  for each partition: w.Partition(&p, recordsLen)
//	w.Finish()
//
// then write Buf and Holes as described at the top of this file. A writer
// can be reused; Begin resets it and reuses Buf and Holes.
type FetchResponseWriter struct {
	Buf   []byte
	Holes []Hole

	version    int16
	start      int // offset of the size prefix in Buf
	extra      int64
	topicsLeft int // topics not yet started
	partsLeft  int // partitions left in the current topic
	inTopic    bool
	err        error
}

// Begin starts a response at the end of buf: size prefix, response header
// (v1 with tags when version >= 12), head fields and the topic count.
func (w *FetchResponseWriter) Begin(buf []byte, version int16, correlationID int32, h *FetchResponseHead, numTopics int) {
	*w = FetchResponseWriter{Buf: buf, Holes: w.Holes[:0], version: version, topicsLeft: numTopics}
	w.Buf, w.start = BeginFrame(w.Buf)
	w.Buf = AppendResponseHeader(w.Buf, KeyFetch, version, correlationID)
	w.Buf = AppendFetchResponseHead(w.Buf, version, h, numTopics)
}

// Topic starts the next topic, closing the previous one.
func (w *FetchResponseWriter) Topic(topic string, topicID [16]byte, numPartitions int) {
	w.closeTopic()
	if w.topicsLeft == 0 {
		w.fail("more topics than announced")
	}
	w.topicsLeft--
	w.inTopic = true
	w.partsLeft = numPartitions
	w.Buf = AppendFetchTopicHead(w.Buf, w.version, topic, topicID, numPartitions)
}

// Partition appends one partition of the current topic, leaving a hole of
// recordsLen bytes for its records.
func (w *FetchResponseWriter) Partition(p *FetchPartitionResponse, recordsLen int) {
	if !w.inTopic || w.partsLeft == 0 {
		w.fail("more partitions than announced")
	}
	w.partsLeft--
	w.Buf = AppendFetchPartitionHeader(w.Buf, w.version, p, recordsLen)
	if recordsLen > 0 {
		w.Holes = append(w.Holes, Hole{At: len(w.Buf), Len: recordsLen})
		w.extra += int64(recordsLen)
	}
	w.Buf = AppendFetchPartitionTrailer(w.Buf, w.version, p)
}

func (w *FetchResponseWriter) closeTopic() {
	if !w.inTopic {
		return
	}
	if w.partsLeft != 0 {
		w.fail("fewer partitions than announced")
	}
	w.Buf = AppendFetchTopicTrailer(w.Buf, w.version)
	w.inTopic = false
}

func (w *FetchResponseWriter) fail(msg string) {
	if w.err == nil {
		w.err = fmt.Errorf("kproto: FetchResponseWriter: %s", msg)
	}
}

// Finish closes the response and patches the frame size, which includes the
// record bytes of all holes. It returns an error if the topic or partition
// counts did not match what Begin and Topic announced; the frame is then
// unusable.
func (w *FetchResponseWriter) Finish() error {
	w.closeTopic()
	if w.topicsLeft != 0 {
		w.fail("fewer topics than announced")
	}
	w.Buf = AppendFetchResponseTrailer(w.Buf, w.version)
	EndFrame(w.Buf, w.start, w.extra)
	return w.err
}

// Size returns the total frame length on the wire, holes included.
func (w *FetchResponseWriter) Size() int64 { return int64(len(w.Buf)-w.start) + w.extra }

// Splice appends the whole frame to dst with records[i] filling Holes[i],
// for tests and for connections that cannot sendfile (TLS). Each records[i]
// must be exactly Holes[i].Len bytes.
func (w *FetchResponseWriter) Splice(dst []byte, records [][]byte) ([]byte, error) {
	if len(records) != len(w.Holes) {
		return dst, fmt.Errorf("kproto: Splice: %d record parts for %d holes", len(records), len(w.Holes))
	}
	prev := w.start
	for i, h := range w.Holes {
		if len(records[i]) != h.Len {
			return dst, fmt.Errorf("kproto: Splice: part %d is %d bytes, hole is %d", i, len(records[i]), h.Len)
		}
		dst = append(dst, w.Buf[prev:h.At]...)
		dst = append(dst, records[i]...)
		prev = h.At
	}
	return append(dst, w.Buf[prev:]...), nil
}

// AppendDivergingEpochTags appends a partition tag section holding only
// DivergingEpoch (tag 0, v12+): the leader's answer to a follower whose
// last fetched epoch ends, in the leader's log, at endOffset under epoch
// (KIP-320). The result is a FetchPartitionResponse.Tags.
func AppendDivergingEpochTags(dst []byte, epoch int32, endOffset int64) RawTags {
	dst = AppendUvarint(dst, 1)
	var v [13]byte
	val := AppendInt64(AppendInt32(v[:0], epoch), endOffset)
	val = append(val, 0) // the struct's own (empty) tag section
	return AppendTag(dst, 0, val)
}
