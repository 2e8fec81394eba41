package broker

import (
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/zkafka/zkafka/kproto"
)

// TestCleanerCheckpointFile: the checkpoint is Kafka's format (version 0,
// entry count, "topic partition offset" lines), read back as written; a
// missing file is empty, a damaged one an error.
func TestCleanerCheckpointFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), cleanerCheckpointName)
	if cp, err := readCleanerCheckpoint(path); err != nil || len(cp) != 0 {
		t.Fatalf("missing file: %v %v", cp, err)
	}
	want := map[string]int64{tpKey("a", 0): 17, tpKey("b.c", 3): 123456789}
	if err := writeCleanerCheckpoint(path, want); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b[:4]) != "0\n2\n" {
		t.Fatalf("file %q: not Kafka's checkpoint format", b)
	}
	got, err := readCleanerCheckpoint(path)
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("read back %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"1\n0\n", "0\n2\na 0 1\n", "0\n1\na x 1\n", "0\n1\na 0 -4\n"} {
		os.WriteFile(path, []byte(bad), 0o644)
		if _, err := readCleanerCheckpoint(path); err == nil {
			t.Fatalf("%q read without an error", bad)
		}
	}
}

// keyedBatch is an uncompressed batch of one record with a key.
func keyedBatch(key []byte) []byte {
	recs := kproto.AppendRecord(nil, 0, 0, key, []byte("value"), 0, nil)
	return kproto.AppendBatch(nil, kproto.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		NumRecords: 1}, recs)
}

// TestCompactedProduce: a compacted topic takes keyed records with the
// produce path's pinned allocations and refuses a keyless one with
// INVALID_RECORD (CORRUPT_MESSAGE before v8, as the other record errors).
func TestCompactedProduce(t *testing.T) {
	b, part := newTestBroker(t)
	part.cfg.Store(effectiveConfig(&b.cfg, map[string]string{"cleanup.policy": "compact"}))
	c := allocConn(b)
	produce := func(v int16, batch []byte) kproto.ErrorCode {
		body := produceRequestBody(v, batch)
		req := &kproto.ProduceRequest{}
		if err := req.Decode(v, body); err != nil {
			t.Fatal(err)
		}
		pr, _ := c.producePartition(req, b.cluster.topic("t"), &req.Topics[0].Partitions[0], b.now(), produceVerdict{})
		return pr.ErrorCode
	}
	if code := produce(9, keyedBatch([]byte("k"))); code != kproto.CodeNone {
		t.Fatalf("keyed record: error %d", code)
	}
	if code := produce(9, keyedBatch(nil)); code != kproto.CodeInvalidRecord {
		t.Fatalf("keyless record, v9: error %d, want INVALID_RECORD", code)
	}
	if code := produce(7, keyedBatch(nil)); code != kproto.CodeCorruptMessage {
		t.Fatalf("keyless record, v7: error %d, want CORRUPT_MESSAGE", code)
	}
	body := produceRequestBody(9, keyedBatch([]byte("k")))
	hdr := kproto.RequestHeader{APIKey: kproto.KeyProduce, APIVersion: 9, CorrelationID: 1}
	run := func() {
		resp, err := handleProduce(c, &hdr, body)
		if err != nil || resp == nil {
			t.Fatal(err)
		}
		resp.release()
	}
	run()
	if allocs := testing.AllocsPerRun(200, run); allocs > maxProduceAllocs {
		t.Errorf("produce to a compacted topic: %.1f allocs per request, want at most %d", allocs, maxProduceAllocs)
	}
}
