package kproto

// ListOffsets (key 2), versions 0-7; flexible from v6.
//
// Timestamp -1 asks for the latest offset, -2 the earliest, -3 (v7+) the
// offset of the record with the largest timestamp. v0 answers with an array
// of old-style offsets (at most MaxNumOffsets); v1+ with one timestamp and
// offset.

// ListOffsetsRequest is a ListOffsets request.
type ListOffsetsRequest struct {
	Version        int16
	ReplicaID      int32
	IsolationLevel int8 // v2+
	Topics         []ListOffsetsTopic
	Tags           RawTags
}

// ListOffsetsTopic is one topic of a ListOffsets request.
type ListOffsetsTopic struct {
	Topic      string
	Partitions []ListOffsetsPartition
	Tags       RawTags
}

// ListOffsetsPartition is one partition of a ListOffsets request.
type ListOffsetsPartition struct {
	Partition          int32
	CurrentLeaderEpoch int32 // v4+; -1 when absent
	Timestamp          int64
	MaxNumOffsets      int32 // v0 only; 1 when absent
	Tags               RawTags
}

// Decode parses body at version into r, reusing r's slices.
func (r *ListOffsetsRequest) Decode(version int16, body []byte) error {
	if err := checkVersion(KeyListOffsets, version, ListOffsetsMaxVersion); err != nil {
		return err
	}
	flex := version >= 6
	b := Reader{Src: body}
	r.Version = version
	r.ReplicaID = b.Int32()
	r.IsolationLevel = 0
	if version >= 2 {
		r.IsolationLevel = b.Int8()
	}
	r.Topics = resize(r.Topics, b.ArrayLen(flex, 2))
	for i := range r.Topics {
		t := &r.Topics[i]
		t.Topic = b.FlexString(flex)
		t.Partitions = resize(t.Partitions, b.ArrayLen(flex, 12))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			p.Partition = b.Int32()
			p.CurrentLeaderEpoch = -1
			if version >= 4 {
				p.CurrentLeaderEpoch = b.Int32()
			}
			p.Timestamp = b.Int64()
			p.MaxNumOffsets = 1
			if version == 0 {
				p.MaxNumOffsets = b.Int32()
			}
			p.Tags = b.FlexTags(flex)
		}
		t.Tags = b.FlexTags(flex)
		if !b.Ok() {
			break
		}
	}
	r.Tags = b.FlexTags(flex)
	if err := b.Complete(); err != nil {
		r.Topics = r.Topics[:0]
		return err
	}
	return nil
}

// AppendTo appends the request body at r.Version.
func (r *ListOffsetsRequest) AppendTo(dst []byte) []byte {
	v := r.Version
	flex := v >= 6
	dst = AppendInt32(dst, r.ReplicaID)
	if v >= 2 {
		dst = AppendInt8(dst, r.IsolationLevel)
	}
	dst = AppendArrayLen(dst, len(r.Topics), flex)
	for i := range r.Topics {
		t := &r.Topics[i]
		dst = AppendFlexString(dst, t.Topic, flex)
		dst = AppendArrayLen(dst, len(t.Partitions), flex)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			dst = AppendInt32(dst, p.Partition)
			if v >= 4 {
				dst = AppendInt32(dst, p.CurrentLeaderEpoch)
			}
			dst = AppendInt64(dst, p.Timestamp)
			if v == 0 {
				dst = AppendInt32(dst, p.MaxNumOffsets)
			}
			dst = appendFlexTags(dst, p.Tags, flex)
		}
		dst = appendFlexTags(dst, t.Tags, flex)
	}
	return appendFlexTags(dst, r.Tags, flex)
}

// ListOffsetsResponse is a ListOffsets response.
type ListOffsetsResponse struct {
	ThrottleMillis int32 // v2+
	Topics         []ListOffsetsTopicResponse
}

// ListOffsetsTopicResponse is one topic of a ListOffsets response.
type ListOffsetsTopicResponse struct {
	Topic      string
	Partitions []ListOffsetsPartitionResponse
}

// ListOffsetsPartitionResponse is one partition of a ListOffsets response.
type ListOffsetsPartitionResponse struct {
	Partition  int32
	ErrorCode  ErrorCode
	OldOffsets []int64 // v0 only
	Timestamp  int64   // v1+
	Offset     int64   // v1+
	// LeaderEpoch is v4+; -1 when unknown.
	LeaderEpoch int32
}

// AppendTo appends the response body at version.
func (r *ListOffsetsResponse) AppendTo(dst []byte, version int16) []byte {
	flex := version >= 6
	if version >= 2 {
		dst = AppendInt32(dst, r.ThrottleMillis)
	}
	dst = AppendArrayLen(dst, len(r.Topics), flex)
	for i := range r.Topics {
		t := &r.Topics[i]
		dst = AppendFlexString(dst, t.Topic, flex)
		dst = AppendArrayLen(dst, len(t.Partitions), flex)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			dst = AppendInt32(dst, p.Partition)
			dst = AppendInt16(dst, int16(p.ErrorCode))
			if version == 0 {
				dst = AppendArrayLen(dst, len(p.OldOffsets), flex)
				for _, o := range p.OldOffsets {
					dst = AppendInt64(dst, o)
				}
			} else {
				dst = AppendInt64(dst, p.Timestamp)
				dst = AppendInt64(dst, p.Offset)
			}
			if version >= 4 {
				dst = AppendInt32(dst, p.LeaderEpoch)
			}
			dst = appendFlexTags(dst, nil, flex)
		}
		dst = appendFlexTags(dst, nil, flex)
	}
	return appendFlexTags(dst, nil, flex)
}
