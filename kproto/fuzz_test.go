package kproto

import (
	"bufio"
	"bytes"
	"testing"
	"testing/iotest"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fuzz targets check more than "no panic": a successful decode must
// re-encode to bytes that decode to the same re-encoding (and, for
// canonical inputs such as kmsg's, to the input itself), and kmsg must
// accept whatever kproto accepts.

type requestCodec interface {
	Decode(version int16, body []byte) error
	AppendTo(dst []byte) []byte
}

// checkRequest runs the shared invariants for one request codec.
func checkRequest(t *testing.T, fresh func() requestCodec, key, version int16, body []byte) {
	r := fresh()
	if err := r.Decode(version, body); err != nil {
		return
	}
	enc := r.AppendTo(nil)
	if len(enc) > len(body) {
		// Canonical re-encoding can only shrink non-minimal varints.
		t.Fatalf("re-encoding grew: %d > %d", len(enc), len(body))
	}
	r2 := fresh()
	if err := r2.Decode(version, enc); err != nil {
		t.Fatalf("re-encoding does not decode: %v", err)
	}
	if enc2 := r2.AppendTo(nil); !bytes.Equal(enc, enc2) {
		t.Fatalf("re-encoding is not stable:\n%x\n%x", enc, enc2)
	}
	// Differential check against kmsg. kmsg parses the tagged fields it
	// knows (a malformed known tag fails there, while kproto keeps tags raw)
	// and canonicalizes varints, bools and duplicate tags, so compare what
	// kmsg makes of our re-encoding with what it makes of the input.
	k := kmsg.RequestForKey(key)
	k.SetVersion(version)
	if err := k.ReadFrom(body); err != nil {
		if !anyTags(r) {
			t.Fatalf("kproto accepted what kmsg rejects: %v", err)
		}
		return
	}
	kenc := k.AppendTo(nil)
	k2 := kmsg.RequestForKey(key)
	k2.SetVersion(version)
	if err := k2.ReadFrom(enc); err != nil {
		t.Fatalf("kmsg rejects kproto's re-encoding: %v", err)
	}
	if kenc2 := k2.AppendTo(nil); !bytes.Equal(kenc, kenc2) {
		t.Fatalf("kmsg sees a different message after kproto's re-encoding:\n%x\n%x", kenc, kenc2)
	}
	r3 := fresh()
	if err := r3.Decode(version, kenc); err != nil {
		t.Fatalf("kproto rejects kmsg's encoding: %v", err)
	}
	if enc3 := r3.AppendTo(nil); !bytes.Equal(enc3, kenc) {
		t.Fatalf("kmsg's canonical encoding does not round-trip:\n%x\n%x", enc3, kenc)
	}
}

// anyTags reports whether a decoded request carries any tagged field.
func anyTags(r requestCodec) bool {
	switch r := r.(type) {
	case *ProduceRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.Tags != nil {
					return true
				}
			}
			if t.Tags != nil {
				return true
			}
		}
		return r.Tags != nil
	case *FetchRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.Tags != nil {
					return true
				}
			}
			if t.Tags != nil {
				return true
			}
		}
		for _, f := range r.Forgotten {
			if f.Tags != nil {
				return true
			}
		}
		return r.Tags != nil
	case *MetadataRequest:
		for _, t := range r.Topics {
			if t.Tags != nil {
				return true
			}
		}
		return r.Tags != nil
	case *ListOffsetsRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.Tags != nil {
					return true
				}
			}
			if t.Tags != nil {
				return true
			}
		}
		return r.Tags != nil
	case *ApiVersionsRequest:
		return r.Tags != nil
	}
	return false
}

func seedRequests(f *testing.F, key, maxVersion int16, build func(v int16) kmsg.Request) {
	for v := int16(0); v <= maxVersion; v++ {
		f.Add(v, build(v).AppendTo(nil))
	}
}

func FuzzParseRequestHeader(f *testing.F) {
	for _, h := range []RequestHeader{
		{APIKey: 7, HeaderVersion: 0},
		{APIKey: 0, APIVersion: 3, CorrelationID: 1, ClientID: []byte("kgo"), HeaderVersion: 1},
		{APIKey: 1, APIVersion: 12, CorrelationID: 2, ClientID: []byte("c"), Tags: RawTags{1, 3, 1, 9}, HeaderVersion: 2},
		{APIKey: 18, APIVersion: 4, CorrelationID: 3, HeaderVersion: 2},
	} {
		f.Add(append(AppendRequestHeader(nil, &h), 1, 2, 3))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, body, err := ParseRequestHeader(frame, nil)
		if err != nil {
			return
		}
		if len(body) > len(frame) {
			t.Fatal("body longer than frame")
		}
		again := append(AppendRequestHeader(nil, &h), body...)
		if !bytes.Equal(again, frame) {
			t.Fatalf("header re-encodes differently:\n%x\n%x", again, frame)
		}
		// Split delivery: the same frame read one byte at a time.
		wire := append(AppendInt32(nil, int32(len(frame))), frame...)
		got, err := ReadFrame(bufio.NewReaderSize(iotest.OneByteReader(bytes.NewReader(wire)), 16), nil, len(frame))
		if err != nil || !bytes.Equal(got, frame) {
			t.Fatalf("split delivery: %v", err)
		}
		if _, _, err := ParseRequestHeader(got, nil); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzProduceRequest(f *testing.F) {
	batch := makeBatch(f, CodecNone, 2)
	seedRequests(f, KeyProduce, ProduceMaxVersion, func(v int16) kmsg.Request {
		k := kmsg.NewPtrProduceRequest()
		k.Version, k.Acks, k.TransactionID = v, 1, sp("t")
		k.Topics = []kmsg.ProduceRequestTopic{{Topic: "a", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 1, Records: batch}, {Partition: 2}}}}
		return k
	})
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		checkRequest(t, func() requestCodec { return new(ProduceRequest) }, KeyProduce, version, body)
		var r ProduceRequest
		if r.Decode(version, body) == nil {
			for _, tp := range r.Topics {
				for _, p := range tp.Partitions {
					it := SplitBatches(p.Records)
					for b, ok := it.Next(); ok; b, ok = it.Next() {
						_ = b.VerifyCRC()
					}
				}
			}
		}
	})
}

func FuzzFetchRequest(f *testing.F) {
	seedRequests(f, KeyFetch, FetchMaxVersion, func(v int16) kmsg.Request {
		k := kmsg.NewPtrFetchRequest()
		k.Version, k.MaxWaitMillis, k.SessionEpoch = v, 500, 1
		k.Topics = []kmsg.FetchRequestTopic{{Topic: "a", TopicID: topicID(1), Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 1, FetchOffset: 9}}}}
		k.ForgottenTopics = []kmsg.FetchRequestForgottenTopic{{Topic: "b", Partitions: []int32{3}}}
		if v >= 12 {
			k.ClusterID = sp("c")
		}
		return k
	})
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		checkRequest(t, func() requestCodec { return new(FetchRequest) }, KeyFetch, version, body)
	})
}

func FuzzMetadataRequest(f *testing.F) {
	seedRequests(f, KeyMetadata, MetadataMaxVersion, func(v int16) kmsg.Request {
		k := kmsg.NewPtrMetadataRequest()
		k.Version = v
		k.Topics = []kmsg.MetadataRequestTopic{{Topic: sp("a")}, {Topic: sp("bb"), TopicID: topicID(2)}}
		return k
	})
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		checkRequest(t, func() requestCodec { return new(MetadataRequest) }, KeyMetadata, version, body)
	})
}

func FuzzListOffsetsRequest(f *testing.F) {
	seedRequests(f, KeyListOffsets, ListOffsetsMaxVersion, func(v int16) kmsg.Request {
		k := kmsg.NewPtrListOffsetsRequest()
		k.Version = v
		k.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "a", Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, Timestamp: -1}}}}
		return k
	})
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		checkRequest(t, func() requestCodec { return new(ListOffsetsRequest) }, KeyListOffsets, version, body)
	})
}

func FuzzApiVersionsRequest(f *testing.F) {
	seedRequests(f, KeyApiVersions, ApiVersionsMaxVersion, func(v int16) kmsg.Request {
		k := kmsg.NewPtrApiVersionsRequest()
		k.Version, k.ClientSoftwareName, k.ClientSoftwareVersion = v, "x", "1"
		return k
	})
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		checkRequest(t, func() requestCodec { return new(ApiVersionsRequest) }, KeyApiVersions, version, body)
	})
}

// FuzzBatch feeds a record set through SplitBatches, the accessors and the
// validator. The CRC is recomputed on a copy first so that mutations reach
// decompression and record parsing instead of stopping at the checksum.
func FuzzBatch(f *testing.F) {
	for _, codec := range testCodecs {
		f.Add(makeBatch(f, codec, 3))
	}
	f.Add(append(makeBatch(f, CodecNone, 1), makeBatch(f, CodecLZ4, 2)...))
	f.Fuzz(func(t *testing.T, set []byte) {
		it := SplitBatches(set)
		total := 0
		var scratch []byte
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			total += len(b)
			if int(b.BatchLength())+12 != len(b) {
				t.Fatalf("batch length %d for %d bytes", b.BatchLength(), len(b))
			}
			if b.Magic() != 2 {
				continue
			}
			_ = b.VerifyCRC()
			_, _ = b.Codec(), b.LastOffset()
			c := Batch(append([]byte(nil), b...))
			c.SetCRC()
			var err error
			scratch, err = ValidateBatchLimit(c, scratch, 1<<20)
			ri, rerr := RecordsLimit(c, scratch, 1<<20)
			n := int32(0)
			for r, ok := ri.Next(); ok; r, ok = ri.Next() {
				if _, herr := r.Headers(nil); herr != nil && err == nil {
					t.Fatalf("validated batch has bad headers: %v", herr)
				}
				n++
			}
			if err == nil && (rerr != nil || ri.Err() != nil || n != c.NumRecords()) {
				t.Fatalf("validated batch iterates %d of %d records (%v %v)", n, c.NumRecords(), rerr, ri.Err())
			}
		}
		if total > len(set) {
			t.Fatalf("batches cover %d of %d bytes", total, len(set))
		}
		if it.Err() == nil && total != len(set) {
			t.Fatalf("no error but %d bytes left", len(set)-total)
		}
	})
}
