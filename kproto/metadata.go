package kproto

// Metadata (key 3), versions 0-12; flexible from v9; topic ids from v10.
//
// Request topics: in v0 an empty array means all topics; from v1 a null
// array means all topics and an empty one means none.

// MetadataRequest is a Metadata request.
type MetadataRequest struct {
	Version int16
	// Topics is nil for "all topics" (null array, v1+); see AllTopics.
	Topics []MetadataRequestTopic
	// AllowAutoTopicCreation is v4+; earlier versions imply true.
	AllowAutoTopicCreation             bool
	IncludeClusterAuthorizedOperations bool // v8-10
	IncludeTopicAuthorizedOperations   bool // v8+
	Tags                               RawTags
}

// MetadataRequestTopic names one topic by name or, v10+, by id.
type MetadataRequestTopic struct {
	TopicID [16]byte // v10+
	// Topic is the name; nil only in v10+ when the topic is named by id.
	Topic *string
	Tags  RawTags
}

// AllTopics reports whether the request asks for every topic.
func (r *MetadataRequest) AllTopics() bool {
	if r.Version == 0 {
		return len(r.Topics) == 0
	}
	return r.Topics == nil
}

// Decode parses body at version into r, reusing r's slices.
func (r *MetadataRequest) Decode(version int16, body []byte) error {
	if err := checkVersion(KeyMetadata, version, MetadataMaxVersion); err != nil {
		return err
	}
	flex := version >= 9
	b := Reader{Src: body}
	r.Version = version
	minTopic := 2 // a name's length
	if version >= 10 {
		minTopic = 18 // id, null name, tags
	}
	var n int
	if version >= 1 {
		n = b.NullableArrayLen(flex, minTopic)
	} else {
		n = b.ArrayLen(flex, minTopic)
	}
	if n < 0 {
		r.Topics = nil
	} else {
		r.Topics = resize(r.Topics, n)
		if r.Topics == nil {
			r.Topics = []MetadataRequestTopic{}
		}
	}
	for i := range r.Topics {
		t := &r.Topics[i]
		t.TopicID = [16]byte{}
		if version >= 10 {
			t.TopicID = b.UUID()
			t.Topic = b.FlexNullableString(flex)
		} else {
			s := b.FlexString(flex)
			t.Topic = &s
		}
		t.Tags = b.FlexTags(flex)
		if !b.Ok() {
			break
		}
	}
	r.AllowAutoTopicCreation = true
	if version >= 4 {
		r.AllowAutoTopicCreation = b.Bool()
	}
	r.IncludeClusterAuthorizedOperations, r.IncludeTopicAuthorizedOperations = false, false
	if version >= 8 && version <= 10 {
		r.IncludeClusterAuthorizedOperations = b.Bool()
	}
	if version >= 8 {
		r.IncludeTopicAuthorizedOperations = b.Bool()
	}
	r.Tags = b.FlexTags(flex)
	if err := b.Complete(); err != nil {
		r.Topics = nil
		return err
	}
	return nil
}

// AppendTo appends the request body at r.Version.
func (r *MetadataRequest) AppendTo(dst []byte) []byte {
	v := r.Version
	flex := v >= 9
	if v >= 1 {
		dst = AppendNullableArrayLen(dst, len(r.Topics), r.Topics == nil, flex)
	} else {
		dst = AppendArrayLen(dst, len(r.Topics), flex)
	}
	for i := range r.Topics {
		t := &r.Topics[i]
		if v >= 10 {
			dst = AppendUUID(dst, t.TopicID)
			dst = AppendFlexNullableString(dst, t.Topic, flex)
		} else {
			var s string
			if t.Topic != nil {
				s = *t.Topic
			}
			dst = AppendFlexString(dst, s, flex)
		}
		dst = appendFlexTags(dst, t.Tags, flex)
	}
	if v >= 4 {
		dst = AppendBool(dst, r.AllowAutoTopicCreation)
	}
	if v >= 8 && v <= 10 {
		dst = AppendBool(dst, r.IncludeClusterAuthorizedOperations)
	}
	if v >= 8 {
		dst = AppendBool(dst, r.IncludeTopicAuthorizedOperations)
	}
	return appendFlexTags(dst, r.Tags, flex)
}

// MetadataResponse is a Metadata response.
type MetadataResponse struct {
	ThrottleMillis int32 // v3+
	Brokers        []MetadataBroker
	ClusterID      *string // v2+
	ControllerID   int32   // v1+
	Topics         []MetadataTopic
	// ClusterAuthorizedOperations is v8-10; -2147483648 means "not asked".
	ClusterAuthorizedOperations int32
}

// MetadataBroker is one live broker.
type MetadataBroker struct {
	NodeID int32
	Host   string
	Port   int32
	Rack   *string // v1+
}

// MetadataTopic is one topic in a Metadata response.
type MetadataTopic struct {
	ErrorCode ErrorCode
	// Topic is the name; it may be nil only in v12+ (a topic asked by an
	// unknown id). Earlier versions encode nil as "".
	Topic      *string
	TopicID    [16]byte // v10+
	IsInternal bool     // v1+
	Partitions []MetadataPartition
	// AuthorizedOperations is v8+; -2147483648 means "not asked".
	AuthorizedOperations int32
}

// MetadataPartition is one partition in a Metadata response.
type MetadataPartition struct {
	ErrorCode       ErrorCode
	Partition       int32
	Leader          int32
	LeaderEpoch     int32 // v7+
	Replicas        []int32
	ISR             []int32
	OfflineReplicas []int32 // v5+
}

// AppendTo appends the response body at version.
func (r *MetadataResponse) AppendTo(dst []byte, version int16) []byte {
	flex := version >= 9
	if version >= 3 {
		dst = AppendInt32(dst, r.ThrottleMillis)
	}
	dst = AppendArrayLen(dst, len(r.Brokers), flex)
	for i := range r.Brokers {
		br := &r.Brokers[i]
		dst = AppendInt32(dst, br.NodeID)
		dst = AppendFlexString(dst, br.Host, flex)
		dst = AppendInt32(dst, br.Port)
		if version >= 1 {
			dst = AppendFlexNullableString(dst, br.Rack, flex)
		}
		dst = appendFlexTags(dst, nil, flex)
	}
	if version >= 2 {
		dst = AppendFlexNullableString(dst, r.ClusterID, flex)
	}
	if version >= 1 {
		dst = AppendInt32(dst, r.ControllerID)
	}
	dst = AppendArrayLen(dst, len(r.Topics), flex)
	for i := range r.Topics {
		t := &r.Topics[i]
		dst = AppendInt16(dst, int16(t.ErrorCode))
		if version >= 12 {
			dst = AppendFlexNullableString(dst, t.Topic, flex)
		} else {
			var s string
			if t.Topic != nil {
				s = *t.Topic
			}
			dst = AppendFlexString(dst, s, flex)
		}
		if version >= 10 {
			dst = AppendUUID(dst, t.TopicID)
		}
		if version >= 1 {
			dst = AppendBool(dst, t.IsInternal)
		}
		dst = AppendArrayLen(dst, len(t.Partitions), flex)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			dst = AppendInt16(dst, int16(p.ErrorCode))
			dst = AppendInt32(dst, p.Partition)
			dst = AppendInt32(dst, p.Leader)
			if version >= 7 {
				dst = AppendInt32(dst, p.LeaderEpoch)
			}
			dst = appendInt32Array(dst, p.Replicas, flex)
			dst = appendInt32Array(dst, p.ISR, flex)
			if version >= 5 {
				dst = appendInt32Array(dst, p.OfflineReplicas, flex)
			}
			dst = appendFlexTags(dst, nil, flex)
		}
		if version >= 8 {
			dst = AppendInt32(dst, t.AuthorizedOperations)
		}
		dst = appendFlexTags(dst, nil, flex)
	}
	if version >= 8 && version <= 10 {
		dst = AppendInt32(dst, r.ClusterAuthorizedOperations)
	}
	return appendFlexTags(dst, nil, flex)
}

func appendInt32Array(dst []byte, a []int32, flex bool) []byte {
	dst = AppendArrayLen(dst, len(a), flex)
	for _, v := range a {
		dst = AppendInt32(dst, v)
	}
	return dst
}
