package znode

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"reflect"
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

func sampleTxns() []Txn {
	return []Txn{
		{},
		{Zxid: 1 << 40, Time: 1700000000000, Session: -5, Super: true,
			Auth: []zkproto.ID{{Scheme: "ip", ID: "127.0.0.1"}, aliceID},
			Ops: []Op{{Type: zkproto.OpCreateTTL, Path: "/a/b", Data: []byte{}, ACL: aliceACL,
				Mode: zkproto.ModePersistentSequentialWithTTL, TTL: 99, Version: -1, SessionTimeout: 7}}},
		{Zxid: 2, Multi: true, Ops: []Op{
			{Type: zkproto.OpCreate, Path: "/x", ACL: openACL}, // null data
			{Type: zkproto.OpSetData, Path: "/x", Data: []byte("v"), Version: 3},
			{Type: zkproto.OpCheck, Path: "/x", Version: -1},
		}},
		{Zxid: 3, Session: sess, Owner: 2, Ops: []Op{{Type: OpRevalidateSession, SessionTimeout: 4000}}},
	}
}

func TestTxnRoundTrip(t *testing.T) {
	for i, txn := range sampleTxns() {
		b := txn.Append([]byte("prefix"))
		got, err := DecodeTxn(b[len("prefix"):])
		if err != nil {
			t.Fatalf("txn %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, txn) {
			t.Fatalf("txn %d:\n got  %+v\n want %+v", i, got, txn)
		}
		if size := txn.Size(); size != len(b)-len("prefix") {
			t.Fatalf("txn %d: Size %d, encoding %d bytes", i, size, len(b)-len("prefix"))
		}
		if !bytes.Equal(got.Append(nil), b[len("prefix"):]) {
			t.Fatalf("txn %d: re-encoding differs", i)
		}
		for n := 0; n < len(b)-len("prefix"); n++ {
			if _, err := DecodeTxn(b[len("prefix") : len("prefix")+n]); err == nil {
				t.Fatalf("txn %d: prefix of %d bytes accepted", i, n)
			}
		}
	}
	if _, err := DecodeTxn([]byte{9}); err == nil {
		t.Fatal("unknown version accepted")
	}
}

func FuzzDecodeTxn(f *testing.F) {
	for _, txn := range sampleTxns() {
		f.Add(txn.Append(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		txn, err := DecodeTxn(b)
		if err != nil {
			return
		}
		// A decoded txn survives a round trip (null vectors become empty
		// ones, so compare decoded values), and applies without panic.
		if enc := txn.Append(nil); len(enc) != txn.Size() {
			t.Fatalf("Size %d, encoding %d bytes", txn.Size(), len(enc))
		}
		again, err := DecodeTxn(txn.Append(nil))
		if err != nil || !reflect.DeepEqual(again, txn) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, again, txn)
		}
		tr := New(Options{ExtendedTypes: true})
		tr.Apply(Txn{Zxid: 1, Session: txn.Session, Ops: []Op{{Type: zkproto.OpCreateSession}}})
		tr.Apply(txn)
		tr.ReapCandidates(1 << 62)
	})
}

func FuzzReadSnapshot(f *testing.F) {
	h := newHarness(f, Options{})
	h.must(create("/a", zkproto.ModeEphemeral))
	h.must(createACL("/b", aliceACL), aliceID)
	var buf bytes.Buffer
	if err := h.tree.WriteSnapshot(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzSnapshot(t, b)
		if len(b) >= 4 { // again with a valid checksum, to reach the structure checks
			fixed := append([]byte(nil), b...)
			binary.BigEndian.PutUint32(fixed[len(b)-4:], crc32.Checksum(b[:len(b)-4], crcTable))
			fuzzSnapshot(t, fixed)
		}
	})
}

func fuzzSnapshot(t *testing.T, b []byte) {
	tr, err := ReadSnapshot(bytes.NewReader(b), Options{})
	if err != nil {
		return
	}
	{
		// A loaded tree serializes again, and loads to the same tree.
		var out bytes.Buffer
		if err := tr.WriteSnapshot(&out); err != nil {
			t.Fatal(err)
		}
		tr2, err := ReadSnapshot(&out, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(dump(tr), dump(tr2)) {
			t.Fatal("round trip differs")
		}
		tr.Apply(Txn{Zxid: 1, Ops: []Op{create("/z", 0), del("/a", -1)}})
		tr.ReapCandidates(1 << 62)
	}
}

// TestDecodeAuthShared checks that the identity lists DecodeTxn keeps and
// returns shared decode to what each txn carried, across lists that share
// a prefix and more lists than are kept.
func TestDecodeAuthShared(t *testing.T) {
	ip := zkproto.ID{Scheme: "ip", ID: "127.0.0.1"}
	lists := [][]zkproto.ID{{ip}, {ip, aliceID}, nil, {aliceID}, {ip}, {{Scheme: "ip", ID: "127.0.0.10"}}}
	for i := range 12 {
		lists = append(lists, []zkproto.ID{{Scheme: "ip", ID: fmt.Sprintf("10.0.0.%d", i)}})
	}
	for round := range 2 {
		for i, auth := range lists {
			txn := Txn{Zxid: 5, Auth: auth, Ops: []Op{{Type: zkproto.OpCreate, Path: "/a", ACL: openACL}}}
			got, err := DecodeTxn(txn.Append(nil))
			if err != nil || !reflect.DeepEqual(got, txn) {
				t.Fatalf("round %d, list %d: %v\n got  %+v\n want %+v", round, i, err, got, txn)
			}
		}
	}
}
