package kproto

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Responses: for every version, build the same response with kproto and with
// kmsg, require identical bytes, and decode kproto's bytes with kmsg.

func TestProduceResponseMatchesKmsg(t *testing.T) {
	for v := int16(0); v <= ProduceMaxVersion; v++ {
		r := ProduceResponse{ThrottleMillis: 12}
		k := kmsg.NewPtrProduceResponse()
		k.Version = v
		if v >= 1 {
			k.ThrottleMillis = 12
		}
		for ti, name := range []string{"alpha", "beta"} {
			rt := ProduceTopicResponse{Topic: name}
			kt := kmsg.NewProduceResponseTopic()
			kt.Topic = name
			for pi := range 2 {
				rp := ProducePartitionResponse{
					Partition: int32(pi), ErrorCode: []ErrorCode{CodeNone, CodeCorruptMessage}[pi],
					BaseOffset: int64(1000 * ti), LogAppendTime: -1, LogStartOffset: 7,
				}
				kp := kmsg.NewProduceResponseTopicPartition()
				kp.Partition, kp.ErrorCode, kp.BaseOffset = rp.Partition, int16(rp.ErrorCode), rp.BaseOffset
				if v >= 2 {
					kp.LogAppendTime = -1
				}
				if v >= 5 {
					kp.LogStartOffset = 7
				}
				if v >= 8 && pi == 1 {
					rp.RecordErrors = []ProduceRecordError{{RelativeOffset: 2, ErrorMessage: sp("bad")}}
					rp.ErrorMessage = sp("batch rejected")
					kp.ErrorRecords = []kmsg.ProduceResponseTopicPartitionErrorRecord{{RelativeOffset: 2, ErrorMessage: sp("bad")}}
					kp.ErrorMessage = sp("batch rejected")
				}
				rt.Partitions = append(rt.Partitions, rp)
				kt.Partitions = append(kt.Partitions, kp)
			}
			r.Topics = append(r.Topics, rt)
			k.Topics = append(k.Topics, kt)
		}
		got := r.AppendTo(nil, v)
		mustEqualBytes(t, "produce response", got, k.AppendTo(nil))
		back := kmsg.NewPtrProduceResponse()
		back.Version = v
		if err := back.ReadFrom(got); err != nil || back.Topics[1].Partitions[1].ErrorCode != int16(CodeCorruptMessage) {
			t.Fatalf("v%d: kmsg decode: %v", v, err)
		}
	}
}

func TestMetadataResponseMatchesKmsg(t *testing.T) {
	for v := int16(0); v <= MetadataMaxVersion; v++ {
		r := MetadataResponse{
			ThrottleMillis: 3,
			Brokers:        []MetadataBroker{{NodeID: 1, Host: "127.0.0.1", Port: 9092, Rack: sp("r1")}, {NodeID: 2, Host: "h2", Port: 9093}},
			ClusterID:      sp("zk-cluster"),
			ControllerID:   1,
			Topics: []MetadataTopic{
				{Topic: sp("alpha"), TopicID: topicID(1), Partitions: []MetadataPartition{
					{Partition: 0, Leader: 1, LeaderEpoch: 5, Replicas: []int32{1, 2}, ISR: []int32{1}, OfflineReplicas: []int32{2}},
					{ErrorCode: CodeLeaderNotAvailable, Partition: 1, Leader: -1, LeaderEpoch: -1, Replicas: []int32{2}, ISR: []int32{}, OfflineReplicas: []int32{}},
				}, AuthorizedOperations: -2147483648},
				{ErrorCode: CodeUnknownTopicOrPartition, Topic: sp("nope"), IsInternal: false, AuthorizedOperations: -2147483648},
			},
			ClusterAuthorizedOperations: -2147483648,
		}
		k := kmsg.NewPtrMetadataResponse()
		k.Version = v
		if v >= 3 {
			k.ThrottleMillis = 3
		}
		for _, b := range r.Brokers {
			kb := kmsg.NewMetadataResponseBroker()
			kb.NodeID, kb.Host, kb.Port = b.NodeID, b.Host, b.Port
			if v >= 1 {
				kb.Rack = b.Rack
			}
			k.Brokers = append(k.Brokers, kb)
		}
		if v >= 2 {
			k.ClusterID = r.ClusterID
		}
		if v >= 1 {
			k.ControllerID = 1
		}
		for _, tp := range r.Topics {
			kt := kmsg.NewMetadataResponseTopic()
			kt.ErrorCode, kt.Topic = int16(tp.ErrorCode), tp.Topic
			if v >= 10 {
				kt.TopicID = tp.TopicID
			}
			for _, p := range tp.Partitions {
				kp := kmsg.NewMetadataResponseTopicPartition()
				kp.ErrorCode, kp.Partition, kp.Leader = int16(p.ErrorCode), p.Partition, p.Leader
				kp.Replicas, kp.ISR = p.Replicas, p.ISR
				if v >= 7 {
					kp.LeaderEpoch = p.LeaderEpoch
				}
				if v >= 5 {
					kp.OfflineReplicas = p.OfflineReplicas
				}
				kt.Partitions = append(kt.Partitions, kp)
			}
			k.Topics = append(k.Topics, kt)
		}
		got := r.AppendTo(nil, v)
		mustEqualBytes(t, "metadata response", got, k.AppendTo(nil))
		back := kmsg.NewPtrMetadataResponse()
		back.Version = v
		if err := back.ReadFrom(got); err != nil || len(back.Topics) != 2 || *back.Topics[0].Topic != "alpha" {
			t.Fatalf("v%d: kmsg decode: %v", v, err)
		}
	}
}

func TestListOffsetsResponseMatchesKmsg(t *testing.T) {
	for v := int16(0); v <= ListOffsetsMaxVersion; v++ {
		r := ListOffsetsResponse{ThrottleMillis: 1, Topics: []ListOffsetsTopicResponse{{Topic: "alpha", Partitions: []ListOffsetsPartitionResponse{
			{Partition: 0, OldOffsets: []int64{42, 0}, Timestamp: -1, Offset: 42, LeaderEpoch: 3},
			{Partition: 1, ErrorCode: CodeNotLeaderOrFollower, Timestamp: -1, Offset: -1, LeaderEpoch: -1},
		}}}}
		k := kmsg.NewPtrListOffsetsResponse()
		k.Version = v
		if v >= 2 {
			k.ThrottleMillis = 1
		}
		kt := kmsg.NewListOffsetsResponseTopic()
		kt.Topic = "alpha"
		for _, p := range r.Topics[0].Partitions {
			kp := kmsg.NewListOffsetsResponseTopicPartition()
			kp.Partition, kp.ErrorCode = p.Partition, int16(p.ErrorCode)
			if v == 0 {
				kp.OldStyleOffsets = p.OldOffsets
			} else {
				kp.Timestamp, kp.Offset = p.Timestamp, p.Offset
			}
			if v >= 4 {
				kp.LeaderEpoch = p.LeaderEpoch
			}
			kt.Partitions = append(kt.Partitions, kp)
		}
		k.Topics = append(k.Topics, kt)
		got := r.AppendTo(nil, v)
		mustEqualBytes(t, "listoffsets response", got, k.AppendTo(nil))
		back := kmsg.NewPtrListOffsetsResponse()
		back.Version = v
		if err := back.ReadFrom(got); err != nil {
			t.Fatalf("v%d: kmsg decode: %v", v, err)
		}
	}
}

func TestApiVersionsResponseMatchesKmsg(t *testing.T) {
	keys := []ApiVersionsRange{{KeyProduce, 0, 9}, {KeyFetch, 0, 13}, {KeyApiVersions, 0, 3}}
	for v := int16(0); v <= ApiVersionsMaxVersion; v++ {
		r := ApiVersionsResponse{APIKeys: keys, ThrottleMillis: 0}
		k := kmsg.NewPtrApiVersionsResponse()
		k.Version = v
		for _, a := range keys {
			k.ApiKeys = append(k.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: a.APIKey, MinVersion: a.MinVersion, MaxVersion: a.MaxVersion})
		}
		got := r.AppendTo(nil, v)
		mustEqualBytes(t, "apiversions response", got, k.AppendTo(nil))
	}
}

// TestApiVersionsTooNew is the KIP-511 fallback: a v4 (or v99) request gets a
// v0-encoded UNSUPPORTED_VERSION reply with the api keys, and a v0 response
// header even though v3+ requests use request header v2.
func TestApiVersionsTooNew(t *testing.T) {
	for _, asked := range []int16{4, 99} {
		req := AppendRequestHeader(nil, &RequestHeader{APIKey: KeyApiVersions, APIVersion: asked, CorrelationID: 9, ClientID: []byte("rdkafka"), HeaderVersion: 2})
		req = append(req, 4, 'n', 'a', 'm', 4, '1', '.', '0', 0) // v3-shaped body, ignored
		h, _, err := ParseRequestHeader(req, nil)
		if err != nil || h.HeaderVersion != 2 || string(h.ClientID) != "rdkafka" {
			t.Fatalf("header: %+v %v", h, err)
		}
		rv := ApiVersionsReplyVersion(h.APIVersion)
		if rv != 0 {
			t.Fatalf("reply version %d", rv)
		}
		resp := ApiVersionsResponse{ErrorCode: CodeUnsupportedVersion, APIKeys: []ApiVersionsRange{{KeyApiVersions, 0, 3}}}
		frame, start := BeginFrame(nil)
		frame = AppendResponseHeader(frame, KeyApiVersions, h.APIVersion, h.CorrelationID)
		frame = resp.AppendTo(frame, rv)
		EndFrame(frame, start, 0)
		if int(binary.BigEndian.Uint32(frame)) != len(frame)-4 || binary.BigEndian.Uint32(frame[4:]) != 9 {
			t.Fatalf("frame %x", frame)
		}
		k := kmsg.NewPtrApiVersionsResponse()
		k.Version = 0
		if err := k.ReadFrom(frame[8:]); err != nil || k.ErrorCode != 35 || len(k.ApiKeys) != 1 || k.ApiKeys[0].MaxVersion != 3 {
			t.Fatalf("kmsg: %v %+v", err, k)
		}
	}
}

// TestFetchResponseSpliced builds Fetch responses with holes for every
// version, splices record bytes in, and checks kmsg decodes the frame and
// that it equals kmsg's own encoding.
func TestFetchResponseSpliced(t *testing.T) {
	recs := [][]byte{makeBatch(t, CodecNone, 3), append(makeBatch(t, CodecGzip, 5), makeBatch(t, CodecNone, 1)...)}
	for v := int16(0); v <= FetchMaxVersion; v++ {
		head := FetchResponseHead{ThrottleMillis: 5, ErrorCode: CodeNone, SessionID: 123}
		parts := []FetchPartitionResponse{
			{Partition: 0, HighWatermark: 3, LastStableOffset: 3, LogStartOffset: 0, PreferredReadReplica: -1},
			{Partition: 1, ErrorCode: CodeOffsetOutOfRange, HighWatermark: 10, LastStableOffset: 10, LogStartOffset: 2, PreferredReadReplica: -1,
				AbortedTransactions: []FetchAbortedTransaction{{ProducerID: 7, FirstOffset: 4}}},
			{Partition: 2, HighWatermark: 6, LastStableOffset: 6, LogStartOffset: 0, PreferredReadReplica: -1},
		}
		if v >= 12 {
			// CurrentLeader{2, 9} (with its own empty tag section)
			parts[1].Tags = RawTags(AppendTag([]byte{1}, 1, append(AppendInt32(AppendInt32(nil, 2), 9), 0)))
		}
		lens := []int{len(recs[0]), 0, len(recs[1])}

		var w FetchResponseWriter
		w.Begin(nil, v, 77, &head, 2)
		w.Topic("alpha", topicID(1), 2)
		w.Partition(&parts[0], lens[0])
		w.Partition(&parts[1], lens[1])
		w.Topic("beta", topicID(2), 1)
		w.Partition(&parts[2], lens[2])
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		if len(w.Holes) != 2 {
			t.Fatalf("holes %+v", w.Holes)
		}
		frame, err := w.Splice(nil, recs)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(frame)) != w.Size() || int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
			t.Fatalf("v%d: size prefix %d, frame %d, Size %d", v, binary.BigEndian.Uint32(frame), len(frame), w.Size())
		}
		if bytes.Contains(w.Buf, recs[0]) {
			t.Fatal("record bytes were copied into the buffer")
		}
		hdrLen := 4 // correlation id
		if v >= 12 {
			hdrLen = 5 // and an empty tag section
		}

		// The same response from kmsg.
		k := kmsg.NewPtrFetchResponse()
		k.Version = v
		if v >= 1 {
			k.ThrottleMillis = 5
		}
		if v >= 7 {
			k.SessionID = 123
		}
		pi := 0
		for ti, n := range []int{2, 1} {
			kt := kmsg.NewFetchResponseTopic()
			if v >= 13 {
				kt.TopicID = topicID(ti + 1)
			} else {
				kt.Topic = []string{"alpha", "beta"}[ti]
			}
			for range n {
				p := parts[pi]
				kp := kmsg.NewFetchResponseTopicPartition()
				kp.Partition, kp.ErrorCode, kp.HighWatermark = p.Partition, int16(p.ErrorCode), p.HighWatermark
				if v >= 4 {
					kp.LastStableOffset = p.LastStableOffset
					for _, a := range p.AbortedTransactions {
						kp.AbortedTransactions = append(kp.AbortedTransactions, kmsg.FetchResponseTopicPartitionAbortedTransaction{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
					}
				}
				if v >= 5 {
					kp.LogStartOffset = p.LogStartOffset
				}
				if v >= 12 && pi == 1 {
					kp.CurrentLeader.LeaderID, kp.CurrentLeader.LeaderEpoch = 2, 9
				}
				kp.RecordBatches = []byte{}
				if pi == 0 {
					kp.RecordBatches = recs[0]
				} else if pi == 2 {
					kp.RecordBatches = recs[1]
				}
				kt.Partitions = append(kt.Partitions, kp)
				pi++
			}
			k.Topics = append(k.Topics, kt)
		}
		mustEqualBytes(t, "fetch response body", frame[4+hdrLen:], k.AppendTo(nil))

		back := kmsg.NewPtrFetchResponse()
		back.Version = v
		if err := back.ReadFrom(frame[4+hdrLen:]); err != nil {
			t.Fatalf("v%d: kmsg decode: %v", v, err)
		}
		if !bytes.Equal(back.Topics[1].Partitions[0].RecordBatches, recs[1]) || back.Topics[0].Partitions[1].ErrorCode != int16(CodeOffsetOutOfRange) {
			t.Fatalf("v%d: decoded %+v", v, back)
		}
	}
}

func TestFetchResponseWriterCounts(t *testing.T) {
	var w FetchResponseWriter
	w.Begin(nil, 11, 1, &FetchResponseHead{}, 1)
	w.Topic("a", [16]byte{}, 2)
	w.Partition(&FetchPartitionResponse{}, 0)
	if err := w.Finish(); err == nil {
		t.Fatal("missing partition not reported")
	}
	w.Begin(w.Buf[:0], 11, 1, &FetchResponseHead{}, 0)
	w.Topic("a", [16]byte{}, 0)
	if err := w.Finish(); err == nil {
		t.Fatal("extra topic not reported")
	}
}

// TestDivergingEpochTagsMatchKmsg: a partition answer with DivergingEpoch
// (v12, v13) encodes as kmsg encodes it, and kmsg decodes the fields.
func TestDivergingEpochTagsMatchKmsg(t *testing.T) {
	for v := int16(12); v <= FetchMaxVersion; v++ {
		p := FetchPartitionResponse{Partition: 3, HighWatermark: 40, LastStableOffset: 40, LogStartOffset: 0,
			PreferredReadReplica: -1, Tags: AppendDivergingEpochTags(nil, 4, 1234)}
		var w FetchResponseWriter
		w.Begin(nil, v, 9, &FetchResponseHead{}, 1)
		w.Topic("t", topicID(1), 1)
		w.Partition(&p, 0)
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		k := kmsg.NewPtrFetchResponse()
		k.Version = v
		kt := kmsg.NewFetchResponseTopic()
		if v >= 13 {
			kt.TopicID = topicID(1)
		} else {
			kt.Topic = "t"
		}
		kp := kmsg.NewFetchResponseTopicPartition()
		kp.Partition, kp.HighWatermark, kp.LastStableOffset, kp.LogStartOffset = 3, 40, 40, 0
		kp.DivergingEpoch.Epoch, kp.DivergingEpoch.EndOffset = 4, 1234
		kp.RecordBatches = []byte{}
		kt.Partitions = append(kt.Partitions, kp)
		k.Topics = append(k.Topics, kt)
		mustEqualBytes(t, "fetch response body", w.Buf[4+5:], k.AppendTo(nil))
		back := kmsg.NewPtrFetchResponse()
		back.Version = v
		if err := back.ReadFrom(w.Buf[4+5:]); err != nil {
			t.Fatal(err)
		}
		if de := back.Topics[0].Partitions[0].DivergingEpoch; de.Epoch != 4 || de.EndOffset != 1234 {
			t.Fatalf("v%d: decoded %+v", v, de)
		}
	}
}
