package kproto

// Fetch (key 1), versions 0-13; flexible from v12; topic ids instead of names
// from v13 (also in forgotten topics).
//
// The request decoder fills defaults for fields the version lacks, as kmsg
// does (ReplicaID -1, MaxBytes 0x7fffffff, SessionEpoch -1,
// CurrentLeaderEpoch -1, LastFetchedEpoch -1, LogStartOffset -1).
//
// The response is built for sendfile by FetchResponseWriter (fetch_response.go):
// record bytes never enter the response buffer.

// FetchRequest is a Fetch request.
type FetchRequest struct {
	Version        int16
	ReplicaID      int32 // -1 for consumers
	MaxWaitMillis  int32
	MinBytes       int32
	MaxBytes       int32 // v3+
	IsolationLevel int8  // v4+: 0 read_uncommitted, 1 read_committed
	SessionID      int32 // v7+
	SessionEpoch   int32 // v7+
	Topics         []FetchTopic
	Forgotten      []FetchForgottenTopic // v7+
	RackID         string                // v11+
	Tags           RawTags
}

// FetchTopic is one topic of a Fetch request.
type FetchTopic struct {
	Topic      string   // v0-12
	TopicID    [16]byte // v13+
	Partitions []FetchPartition
	Tags       RawTags
}

// FetchPartition is one partition of a Fetch request.
type FetchPartition struct {
	Partition          int32
	CurrentLeaderEpoch int32 // v9+
	FetchOffset        int64
	LastFetchedEpoch   int32 // v12+
	LogStartOffset     int64 // v5+
	PartitionMaxBytes  int32
	Tags               RawTags
}

// FetchForgottenTopic lists partitions to drop from an incremental fetch
// session (v7+).
type FetchForgottenTopic struct {
	Topic      string   // v7-12
	TopicID    [16]byte // v13+
	Partitions []int32
	Tags       RawTags
}

// Decode parses body at version into r, reusing r's slices.
func (r *FetchRequest) Decode(version int16, body []byte) error {
	if err := checkVersion(KeyFetch, version, FetchMaxVersion); err != nil {
		return err
	}
	flex := version >= 12
	b := Reader{Src: body}
	r.Version = version
	r.ReplicaID = b.Int32()
	r.MaxWaitMillis = b.Int32()
	r.MinBytes = b.Int32()
	r.MaxBytes = 0x7fffffff
	if version >= 3 {
		r.MaxBytes = b.Int32()
	}
	r.IsolationLevel = 0
	if version >= 4 {
		r.IsolationLevel = b.Int8()
	}
	r.SessionID, r.SessionEpoch = 0, -1
	if version >= 7 {
		r.SessionID = b.Int32()
		r.SessionEpoch = b.Int32()
	}
	minTopic, minPart := 6, 16
	if flex {
		minTopic, minPart = 3, 17
	}
	r.Topics = resize(r.Topics, b.ArrayLen(flex, minTopic))
	for i := range r.Topics {
		t := &r.Topics[i]
		t.Topic, t.TopicID = "", [16]byte{}
		if version >= 13 {
			t.TopicID = b.UUID()
		} else {
			t.Topic = b.FlexString(flex)
		}
		t.Partitions = resize(t.Partitions, b.ArrayLen(flex, minPart))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			p.Partition = b.Int32()
			p.CurrentLeaderEpoch = -1
			if version >= 9 {
				p.CurrentLeaderEpoch = b.Int32()
			}
			p.FetchOffset = b.Int64()
			p.LastFetchedEpoch = -1
			if version >= 12 {
				p.LastFetchedEpoch = b.Int32()
			}
			p.LogStartOffset = -1
			if version >= 5 {
				p.LogStartOffset = b.Int64()
			}
			p.PartitionMaxBytes = b.Int32()
			p.Tags = b.FlexTags(flex)
		}
		t.Tags = b.FlexTags(flex)
		if !b.Ok() {
			break
		}
	}
	r.Forgotten = r.Forgotten[:0]
	if version >= 7 {
		r.Forgotten = resize(r.Forgotten, b.ArrayLen(flex, minTopic))
		for i := range r.Forgotten {
			f := &r.Forgotten[i]
			f.Topic, f.TopicID = "", [16]byte{}
			if version >= 13 {
				f.TopicID = b.UUID()
			} else {
				f.Topic = b.FlexString(flex)
			}
			f.Partitions = resize(f.Partitions, b.ArrayLen(flex, 4))
			for j := range f.Partitions {
				f.Partitions[j] = b.Int32()
			}
			f.Tags = b.FlexTags(flex)
			if !b.Ok() {
				break
			}
		}
	}
	r.RackID = ""
	if version >= 11 {
		r.RackID = b.FlexString(flex)
	}
	r.Tags = b.FlexTags(flex)
	if err := b.Complete(); err != nil {
		r.Topics, r.Forgotten = r.Topics[:0], r.Forgotten[:0]
		return err
	}
	return nil
}

// AppendTo appends the request body at r.Version.
func (r *FetchRequest) AppendTo(dst []byte) []byte {
	v := r.Version
	flex := v >= 12
	dst = AppendInt32(dst, r.ReplicaID)
	dst = AppendInt32(dst, r.MaxWaitMillis)
	dst = AppendInt32(dst, r.MinBytes)
	if v >= 3 {
		dst = AppendInt32(dst, r.MaxBytes)
	}
	if v >= 4 {
		dst = AppendInt8(dst, r.IsolationLevel)
	}
	if v >= 7 {
		dst = AppendInt32(dst, r.SessionID)
		dst = AppendInt32(dst, r.SessionEpoch)
	}
	dst = AppendArrayLen(dst, len(r.Topics), flex)
	for i := range r.Topics {
		t := &r.Topics[i]
		if v >= 13 {
			dst = AppendUUID(dst, t.TopicID)
		} else {
			dst = AppendFlexString(dst, t.Topic, flex)
		}
		dst = AppendArrayLen(dst, len(t.Partitions), flex)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			dst = AppendInt32(dst, p.Partition)
			if v >= 9 {
				dst = AppendInt32(dst, p.CurrentLeaderEpoch)
			}
			dst = AppendInt64(dst, p.FetchOffset)
			if v >= 12 {
				dst = AppendInt32(dst, p.LastFetchedEpoch)
			}
			if v >= 5 {
				dst = AppendInt64(dst, p.LogStartOffset)
			}
			dst = AppendInt32(dst, p.PartitionMaxBytes)
			dst = appendFlexTags(dst, p.Tags, flex)
		}
		dst = appendFlexTags(dst, t.Tags, flex)
	}
	if v >= 7 {
		dst = AppendArrayLen(dst, len(r.Forgotten), flex)
		for i := range r.Forgotten {
			f := &r.Forgotten[i]
			if v >= 13 {
				dst = AppendUUID(dst, f.TopicID)
			} else {
				dst = AppendFlexString(dst, f.Topic, flex)
			}
			dst = AppendArrayLen(dst, len(f.Partitions), flex)
			for _, p := range f.Partitions {
				dst = AppendInt32(dst, p)
			}
			dst = appendFlexTags(dst, f.Tags, flex)
		}
	}
	if v >= 11 {
		dst = AppendFlexString(dst, r.RackID, flex)
	}
	return appendFlexTags(dst, r.Tags, flex)
}
