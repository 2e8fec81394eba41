package kproto

// Produce (key 0), versions 0-10; flexible from v9; v10 (KIP-951) adds
// the CurrentLeader and NodeEndpoints tagged fields to the response.
//
// The request is decoded without copying record bytes: each partition's
// Records is a subslice of the request frame, to be split with SplitBatches
// and appended to the log as it came. Decode reuses the Topics and Partitions
// slices of the receiver, so a connection that keeps one ProduceRequest
// decodes steady-state produce requests with one allocation per topic name.
//
//	v0-v2: acks int16 | timeout int32 | [topic [partition records]]
//	v3+:   transactional_id nullable string first
//	v9+:   compact encodings and tagged fields

// ProduceRequest is a Produce request.
type ProduceRequest struct {
	Version       int16
	TransactionID *string // v3+
	Acks          int16
	TimeoutMillis int32
	Topics        []ProduceTopic
	Tags          RawTags
}

// ProduceTopic is one topic of a Produce request.
type ProduceTopic struct {
	Topic      string
	Partitions []ProducePartition
	Tags       RawTags
}

// ProducePartition is one partition of a Produce request.
type ProducePartition struct {
	Partition int32
	// Records is the raw record set, a subslice of the request frame; nil
	// when the client sent null.
	Records []byte
	Tags    RawTags
}

// Decode parses body at version into r, reusing r's slices.
func (r *ProduceRequest) Decode(version int16, body []byte) error {
	if err := checkVersion(KeyProduce, version, ProduceMaxVersion); err != nil {
		return err
	}
	flex := version >= 9
	b := Reader{Src: body}
	r.Version = version
	r.TransactionID = nil
	if version >= 3 {
		r.TransactionID = b.FlexNullableString(flex)
	}
	r.Acks = b.Int16()
	r.TimeoutMillis = b.Int32()
	minTopic, minPart := 6, 8
	if flex {
		minTopic, minPart = 3, 6
	}
	n := b.ArrayLen(flex, minTopic)
	r.Topics = resize(r.Topics, n)
	for i := range r.Topics {
		t := &r.Topics[i]
		t.Topic = b.FlexString(flex)
		np := b.ArrayLen(flex, minPart)
		t.Partitions = resize(t.Partitions, np)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			p.Partition = b.Int32()
			p.Records = b.FlexNullableBytes(flex)
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

// resize returns s with length n, reusing its backing array when it is big
// enough. Reused elements keep old values that the caller overwrites.
func resize[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	return make([]T, n)
}

// AppendTo appends the request body at r.Version.
func (r *ProduceRequest) AppendTo(dst []byte) []byte {
	flex := r.Version >= 9
	if r.Version >= 3 {
		dst = AppendFlexNullableString(dst, r.TransactionID, flex)
	}
	dst = AppendInt16(dst, r.Acks)
	dst = AppendInt32(dst, r.TimeoutMillis)
	dst = AppendArrayLen(dst, len(r.Topics), flex)
	for i := range r.Topics {
		t := &r.Topics[i]
		dst = AppendFlexString(dst, t.Topic, flex)
		dst = AppendArrayLen(dst, len(t.Partitions), flex)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			dst = AppendInt32(dst, p.Partition)
			dst = AppendFlexNullableBytes(dst, p.Records, flex)
			dst = appendFlexTags(dst, p.Tags, flex)
		}
		dst = appendFlexTags(dst, t.Tags, flex)
	}
	return appendFlexTags(dst, r.Tags, flex)
}

// ProduceResponse is a Produce response. It is not sent for acks=0.
type ProduceResponse struct {
	Topics         []ProduceTopicResponse
	ThrottleMillis int32 // v1+
	// NodeEndpoints (v10+, tag 0) are the brokers named by the partitions'
	// CurrentLeader hints.
	NodeEndpoints []NodeEndpoint
}

// NodeEndpoint is a broker's address in a v10+ response (KIP-951).
type NodeEndpoint struct {
	NodeID int32
	Host   string
	Port   int32
}

// LeaderHint is a partition's leader as the broker knows it, sent with
// NOT_LEADER_OR_FOLLOWER so that the client moves without a metadata
// request (KIP-951; v10+, tag 0).
type LeaderHint struct {
	LeaderID, LeaderEpoch int32
}

// ProduceTopicResponse is one topic of a Produce response.
type ProduceTopicResponse struct {
	Topic      string
	Partitions []ProducePartitionResponse
}

// ProducePartitionResponse is one partition of a Produce response.
type ProducePartitionResponse struct {
	Partition  int32
	ErrorCode  ErrorCode
	BaseOffset int64
	// LogAppendTime is -1 unless the topic uses LogAppendTime (v2+).
	LogAppendTime int64
	// LogStartOffset is v5+.
	LogStartOffset int64
	// RecordErrors and ErrorMessage are v8+ (KIP-467).
	RecordErrors []ProduceRecordError
	ErrorMessage *string
	// CurrentLeader is v10+ (nil: not sent).
	CurrentLeader *LeaderHint
}

// ProduceRecordError names one record that made its batch fail (v8+).
type ProduceRecordError struct {
	RelativeOffset int32
	ErrorMessage   *string
}

// AppendTo appends the response body at version.
func (r *ProduceResponse) AppendTo(dst []byte, version int16) []byte {
	flex := version >= 9
	dst = AppendArrayLen(dst, len(r.Topics), flex)
	for i := range r.Topics {
		t := &r.Topics[i]
		dst = AppendFlexString(dst, t.Topic, flex)
		dst = AppendArrayLen(dst, len(t.Partitions), flex)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			dst = AppendInt32(dst, p.Partition)
			dst = AppendInt16(dst, int16(p.ErrorCode))
			dst = AppendInt64(dst, p.BaseOffset)
			if version >= 2 {
				dst = AppendInt64(dst, p.LogAppendTime)
			}
			if version >= 5 {
				dst = AppendInt64(dst, p.LogStartOffset)
			}
			if version >= 8 {
				dst = AppendArrayLen(dst, len(p.RecordErrors), flex)
				for _, e := range p.RecordErrors {
					dst = AppendInt32(dst, e.RelativeOffset)
					dst = AppendFlexNullableString(dst, e.ErrorMessage, flex)
					dst = appendFlexTags(dst, nil, flex)
				}
				dst = AppendFlexNullableString(dst, p.ErrorMessage, flex)
			}
			if version >= 10 && p.CurrentLeader != nil {
				var v [9]byte
				val := AppendInt32(AppendInt32(v[:0], p.CurrentLeader.LeaderID), p.CurrentLeader.LeaderEpoch)
				val = append(val, 0) // the struct's own (empty) tag section
				dst = AppendTag(AppendUvarint(dst, 1), 0, val)
				continue
			}
			dst = appendFlexTags(dst, nil, flex)
		}
		dst = appendFlexTags(dst, nil, flex)
	}
	if version >= 1 {
		dst = AppendInt32(dst, r.ThrottleMillis)
	}
	if version >= 10 && len(r.NodeEndpoints) > 0 {
		var val []byte
		val = AppendArrayLen(val, len(r.NodeEndpoints), true)
		for _, e := range r.NodeEndpoints {
			val = AppendInt32(val, e.NodeID)
			val = AppendFlexString(val, e.Host, true)
			val = AppendInt32(val, e.Port)
			val = AppendFlexNullableString(val, nil, true) // rack
			val = append(val, 0)
		}
		return AppendTag(AppendUvarint(dst, 1), 0, val)
	}
	return appendFlexTags(dst, nil, flex)
}
