package kproto

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Requests: for every version, encode a populated request with kmsg, decode
// it with kproto and compare the fields, re-encode with kproto and require
// the same bytes, and decode kproto's bytes with kmsg.

func TestProduceRequestRoundTrip(t *testing.T) {
	batch := makeBatch(t, CodecNone, 3)
	for v := int16(0); v <= ProduceMaxVersion; v++ {
		k := kmsg.NewPtrProduceRequest()
		k.Version = v
		if v >= 3 {
			k.TransactionID = sp("txn-1")
		}
		k.Acks = -1
		k.TimeoutMillis = 1500
		for ti := range 2 {
			kt := kmsg.NewProduceRequestTopic()
			kt.Topic = []string{"alpha", "beta"}[ti]
			for pi := range 3 {
				kp := kmsg.NewProduceRequestTopicPartition()
				kp.Partition = int32(pi)
				if pi != 2 {
					kp.Records = batch
				}
				if v >= 9 && pi == 1 {
					kp.UnknownTags = someTags(5)
				}
				kt.Partitions = append(kt.Partitions, kp)
			}
			if v >= 9 {
				kt.UnknownTags = someTags(3)
			}
			k.Topics = append(k.Topics, kt)
		}
		raw := k.AppendTo(nil)

		var r ProduceRequest
		if err := r.Decode(v, raw); err != nil {
			t.Fatalf("v%d: decode: %v", v, err)
		}
		if (r.TransactionID == nil) != (k.TransactionID == nil) || r.Acks != -1 || r.TimeoutMillis != 1500 || len(r.Topics) != 2 {
			t.Fatalf("v%d: header fields %+v", v, r)
		}
		for ti, kt := range k.Topics {
			rt := r.Topics[ti]
			if rt.Topic != kt.Topic || len(rt.Partitions) != len(kt.Partitions) {
				t.Fatalf("v%d: topic %d: %+v", v, ti, rt)
			}
			for pi, kp := range kt.Partitions {
				rp := rt.Partitions[pi]
				if rp.Partition != kp.Partition || string(rp.Records) != string(kp.Records) || (rp.Records == nil) != (kp.Records == nil) {
					t.Fatalf("v%d: partition %d/%d: %+v", v, ti, pi, rp)
				}
				if rp.Records != nil && !aliases(rp.Records, raw) {
					t.Fatalf("v%d: records were copied", v)
				}
			}
		}
		enc := r.AppendTo(nil)
		mustEqualBytes(t, "produce re-encode", enc, raw)
		k2 := kmsg.NewPtrProduceRequest()
		k2.Version = v
		if err := k2.ReadFrom(enc); err != nil {
			t.Fatalf("v%d: kmsg decode: %v", v, err)
		}
		// Decode again into the same struct: slices are reused.
		if err := r.Decode(v, raw); err != nil || len(r.Topics) != 2 {
			t.Fatalf("v%d: reuse decode: %v", v, err)
		}
	}
}

func TestFetchRequestRoundTrip(t *testing.T) {
	for v := int16(0); v <= FetchMaxVersion; v++ {
		k := kmsg.NewPtrFetchRequest()
		k.Version = v
		k.ReplicaID = -1
		k.MaxWaitMillis = 500
		k.MinBytes = 1
		if v >= 3 {
			k.MaxBytes = 52428800
		}
		if v >= 4 {
			k.IsolationLevel = 1
		}
		if v >= 7 {
			k.SessionID = 77
			k.SessionEpoch = 3
		}
		for ti := range 2 {
			kt := kmsg.NewFetchRequestTopic()
			kt.Topic = []string{"alpha", "beta"}[ti]
			if v >= 13 {
				kt.Topic = ""
				kt.TopicID = topicID(ti)
			}
			for pi := range 2 {
				kp := kmsg.NewFetchRequestTopicPartition()
				kp.Partition = int32(pi)
				kp.FetchOffset = int64(100 * (pi + 1))
				kp.PartitionMaxBytes = 1 << 20
				if v >= 9 {
					kp.CurrentLeaderEpoch = 4
				}
				if v >= 12 {
					kp.LastFetchedEpoch = 3
					kp.UnknownTags = someTags(9)
				}
				if v >= 5 {
					kp.LogStartOffset = 0
				}
				kt.Partitions = append(kt.Partitions, kp)
			}
			k.Topics = append(k.Topics, kt)
		}
		if v >= 7 {
			f := kmsg.NewFetchRequestForgottenTopic()
			f.Topic = "gone"
			if v >= 13 {
				f.Topic = ""
				f.TopicID = topicID(9)
			}
			f.Partitions = []int32{1, 5}
			k.ForgottenTopics = append(k.ForgottenTopics, f)
		}
		if v >= 11 {
			k.Rack = "rack-a"
		}
		if v >= 12 {
			k.ClusterID = sp("cluster") // top-level tag 0
		}
		raw := k.AppendTo(nil)

		var r FetchRequest
		if err := r.Decode(v, raw); err != nil {
			t.Fatalf("v%d: decode: %v", v, err)
		}
		if r.ReplicaID != k.ReplicaID || r.MaxWaitMillis != 500 || r.MinBytes != 1 || r.MaxBytes != k.MaxBytes ||
			r.IsolationLevel != k.IsolationLevel || r.SessionID != k.SessionID || r.SessionEpoch != k.SessionEpoch ||
			r.RackID != k.Rack || len(r.Topics) != 2 || len(r.Forgotten) != len(k.ForgottenTopics) {
			t.Fatalf("v%d: fields %+v vs %+v", v, r, k)
		}
		for ti, kt := range k.Topics {
			rt := r.Topics[ti]
			if rt.Topic != kt.Topic || rt.TopicID != kt.TopicID {
				t.Fatalf("v%d: topic %+v", v, rt)
			}
			for pi, kp := range kt.Partitions {
				rp := rt.Partitions[pi]
				if rp.Partition != kp.Partition || rp.FetchOffset != kp.FetchOffset || rp.PartitionMaxBytes != kp.PartitionMaxBytes ||
					rp.CurrentLeaderEpoch != kp.CurrentLeaderEpoch || rp.LastFetchedEpoch != kp.LastFetchedEpoch ||
					rp.LogStartOffset != kp.LogStartOffset {
					t.Fatalf("v%d: partition %+v vs %+v", v, rp, kp)
				}
			}
		}
		for i, f := range k.ForgottenTopics {
			rf := r.Forgotten[i]
			if rf.Topic != f.Topic || rf.TopicID != f.TopicID || len(rf.Partitions) != 2 || rf.Partitions[1] != 5 {
				t.Fatalf("v%d: forgotten %+v", v, rf)
			}
		}
		enc := r.AppendTo(nil)
		mustEqualBytes(t, "fetch re-encode", enc, raw)
		k2 := kmsg.NewPtrFetchRequest()
		k2.Version = v
		if err := k2.ReadFrom(enc); err != nil {
			t.Fatalf("v%d: kmsg decode: %v", v, err)
		}
		if v >= 12 && (k2.ClusterID == nil || *k2.ClusterID != "cluster") {
			t.Fatalf("v%d: raw tags lost the cluster id", v)
		}
	}
}

func TestMetadataRequestRoundTrip(t *testing.T) {
	for v := int16(0); v <= MetadataMaxVersion; v++ {
		for _, all := range []bool{false, true} {
			if all && v == 0 {
				continue // v0 "all" is the empty array, covered below
			}
			k := kmsg.NewPtrMetadataRequest()
			k.Version = v
			if !all {
				for i, name := range []string{"alpha", "beta", ""} {
					kt := kmsg.NewMetadataRequestTopic()
					kt.Topic = sp(name)
					if v >= 10 && i == 2 {
						kt.Topic = nil
						kt.TopicID = topicID(i)
					}
					k.Topics = append(k.Topics, kt)
				}
			}
			k.AllowAutoTopicCreation = v < 4 || v%2 == 0
			if v >= 8 {
				k.IncludeClusterAuthorizedOperations = v <= 10
				k.IncludeTopicAuthorizedOperations = true
			}
			raw := k.AppendTo(nil)
			var r MetadataRequest
			if err := r.Decode(v, raw); err != nil {
				t.Fatalf("v%d: decode: %v", v, err)
			}
			if r.AllTopics() != all || len(r.Topics) != len(k.Topics) || r.AllowAutoTopicCreation != k.AllowAutoTopicCreation ||
				r.IncludeClusterAuthorizedOperations != k.IncludeClusterAuthorizedOperations ||
				r.IncludeTopicAuthorizedOperations != k.IncludeTopicAuthorizedOperations {
				t.Fatalf("v%d all=%v: %+v", v, all, r)
			}
			for i, kt := range k.Topics {
				rt := r.Topics[i]
				if rt.TopicID != kt.TopicID || (rt.Topic == nil) != (kt.Topic == nil) || (rt.Topic != nil && *rt.Topic != *kt.Topic) {
					t.Fatalf("v%d: topic %d: %+v", v, i, rt)
				}
			}
			enc := r.AppendTo(nil)
			mustEqualBytes(t, "metadata re-encode", enc, raw)
			k2 := kmsg.NewPtrMetadataRequest()
			k2.Version = v
			if err := k2.ReadFrom(enc); err != nil || (k2.Topics == nil) != (k.Topics == nil) {
				t.Fatalf("v%d: kmsg decode: %v", v, err)
			}
		}
	}
}

func TestListOffsetsRequestRoundTrip(t *testing.T) {
	for v := int16(0); v <= ListOffsetsMaxVersion; v++ {
		k := kmsg.NewPtrListOffsetsRequest()
		k.Version = v
		k.ReplicaID = -1
		if v >= 2 {
			k.IsolationLevel = 1
		}
		kt := kmsg.NewListOffsetsRequestTopic()
		kt.Topic = "alpha"
		for i, ts := range []int64{-1, -2, 1_700_000_000_000} {
			kp := kmsg.NewListOffsetsRequestTopicPartition()
			kp.Partition = int32(i)
			kp.Timestamp = ts
			if v >= 4 {
				kp.CurrentLeaderEpoch = 2
			}
			if v == 0 {
				kp.MaxNumOffsets = 5
			}
			kt.Partitions = append(kt.Partitions, kp)
		}
		k.Topics = append(k.Topics, kt)
		raw := k.AppendTo(nil)
		var r ListOffsetsRequest
		if err := r.Decode(v, raw); err != nil {
			t.Fatalf("v%d: decode: %v", v, err)
		}
		if r.ReplicaID != -1 || r.IsolationLevel != k.IsolationLevel || len(r.Topics) != 1 || r.Topics[0].Topic != "alpha" {
			t.Fatalf("v%d: %+v", v, r)
		}
		for i, kp := range kt.Partitions {
			rp := r.Topics[0].Partitions[i]
			if rp.Partition != kp.Partition || rp.Timestamp != kp.Timestamp || rp.CurrentLeaderEpoch != kp.CurrentLeaderEpoch ||
				rp.MaxNumOffsets != kp.MaxNumOffsets {
				t.Fatalf("v%d: partition %+v vs %+v", v, rp, kp)
			}
		}
		enc := r.AppendTo(nil)
		mustEqualBytes(t, "listoffsets re-encode", enc, raw)
	}
}

func TestApiVersionsRequestRoundTrip(t *testing.T) {
	for v := int16(0); v <= ApiVersionsMaxVersion; v++ {
		k := kmsg.NewPtrApiVersionsRequest()
		k.Version = v
		if v >= 3 {
			k.ClientSoftwareName = "kgo"
			k.ClientSoftwareVersion = "1.22.3"
		}
		raw := k.AppendTo(nil)
		var r ApiVersionsRequest
		if err := r.Decode(v, raw); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if r.ClientSoftwareName != k.ClientSoftwareName || r.ClientSoftwareVersion != k.ClientSoftwareVersion {
			t.Fatalf("v%d: %+v", v, r)
		}
		mustEqualBytes(t, "apiversions re-encode", r.AppendTo(nil), raw)
	}
}

func TestDecodeRejectsUnsupportedVersions(t *testing.T) {
	var p ProduceRequest
	var f FetchRequest
	var m MetadataRequest
	var l ListOffsetsRequest
	var a ApiVersionsRequest
	for _, err := range []error{
		p.Decode(ProduceMaxVersion+1, nil), f.Decode(FetchMaxVersion+1, nil),
		m.Decode(MetadataMaxVersion+1, nil), l.Decode(ListOffsetsMaxVersion+1, nil),
		a.Decode(ApiVersionsMaxVersion+1, nil), p.Decode(-1, nil),
	} {
		if _, ok := err.(*VersionError); !ok {
			t.Fatalf("want *VersionError, got %v", err)
		}
	}
}

func TestDecodeKmsg(t *testing.T) {
	k := kmsg.NewPtrJoinGroupRequest()
	k.Version = 5
	k.Group = "g"
	k.SessionTimeoutMillis = 10000
	k.ProtocolType = "consumer"
	k.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{1, 2}}}
	req, err := DecodeKmsg(KeyJoinGroup, 5, k.AppendTo(nil))
	if err != nil {
		t.Fatal(err)
	}
	jg := req.(*kmsg.JoinGroupRequest)
	if jg.Group != "g" || jg.Protocols[0].Name != "range" {
		t.Fatalf("%+v", jg)
	}
	if _, err := DecodeKmsg(KeyJoinGroup, 99, nil); err == nil {
		t.Fatal("want version error")
	}
	if _, err := DecodeKmsg(-5, 0, nil); err == nil {
		t.Fatal("want unknown key error")
	}
	if _, err := DecodeKmsg(KeyHeartbeat, 0, []byte{0, 5, 'g'}); err == nil {
		t.Fatal("want truncation error")
	}

	resp := jg.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.Version = 5
	resp.MemberID = "m-1"
	frame := AppendKmsgResponseFrame(nil, 42, resp)
	body := frame[8:] // size, correlation id; v5 is not flexible
	back := kmsg.NewPtrJoinGroupResponse()
	back.Version = 5
	if err := back.ReadFrom(body); err != nil || back.MemberID != "m-1" {
		t.Fatalf("kmsg response: %v %+v", err, back)
	}
	mustEqualBytes(t, "AppendKmsgResponse", AppendKmsgResponse(nil, resp), body)
}
