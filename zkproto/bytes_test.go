package zkproto

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// h decodes hex with spaces and | separators, for readable expectations.
func h(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const pw16 = "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"

func pw() []byte {
	b := make([]byte, 16)
	for i := range b {
		b[i] = 0xa0 + byte(i)
	}
	return b
}

// TestBytes checks encodings against bytes computed by hand from
// zookeeper.jute, then decodes them back.
func TestBytes(t *testing.T) {
	cases := []struct {
		name string
		rec  Record
		hex  string
		size int
	}{
		{"ConnectRequest without readOnly", &ConnectRequest{LastZxidSeen: 0x0102030405060708, TimeOut: 30000, SessionID: 0x1122334455667788, Passwd: pw()},
			"00000000 | 0102030405060708 | 00007530 | 1122334455667788 | 00000010" + pw16, 44},
		{"ConnectRequest with readOnly", &ConnectRequest{LastZxidSeen: 0x0102030405060708, TimeOut: 30000, SessionID: 0x1122334455667788, Passwd: pw(), ReadOnly: true, HasReadOnly: true},
			"00000000 | 0102030405060708 | 00007530 | 1122334455667788 | 00000010" + pw16 + "| 01", 45},
		{"ConnectResponse without readOnly", &ConnectResponse{TimeOut: 30000, SessionID: 0x1122334455667788, Passwd: pw()},
			"00000000 | 00007530 | 1122334455667788 | 00000010" + pw16, 36},
		{"ConnectResponse with readOnly", &ConnectResponse{TimeOut: 30000, SessionID: 0x1122334455667788, Passwd: pw(), HasReadOnly: true},
			"00000000 | 00007530 | 1122334455667788 | 00000010" + pw16 + "| 00", 37},
		{"Stat", &testStat,
			"0000000100000002 | 0000000100000003 | 0000018bcfe56800 | 0000018bcfe56801 |" +
				"00000003 | 00000004 | 00000005 | 01000a0b0c0d0e0f | 00000006 | 00000007 | 0000000100000008", StatSize},
		{"failed multi response", &MultiResponse{Results: []MultiResult{
			{Type: OpError, Err: ErrOK}, {Type: OpError, Err: ErrNodeExists}, {Type: OpError, Err: ErrRuntimeInconsistency}}},
			"ffffffff 00 00000000 | 00000000 |" +
				"ffffffff 00 ffffff92 | ffffff92 |" +
				"ffffffff 00 fffffffe | fffffffe |" +
				"ffffffff 01 ffffffff", 3*13 + 9},
		{"multi response", &MultiResponse{Results: []MultiResult{{Type: OpCreate, Path: "/a"}, {Type: OpDelete}}},
			"00000001 00 00000000 | 00000002 2f61 | 00000002 00 00000000 | ffffffff 01 ffffffff", 9 + 6 + 9 + 9},
		{"multi request", &MultiRequest{Ops: []MultiOp{
			{Type: OpCreate, Op: &CreateRequest{Path: "/a", ACL: OpenACLUnsafe}},
			{Type: OpCheck, Op: &CheckVersionRequest{Path: "/a", Version: 1}}}},
			"00000001 00 ffffffff | 00000002 2f61 | ffffffff | 00000001 0000001f 00000005 776f726c64 00000006 616e796f6e65 | 00000000 |" +
				"0000000d 00 ffffffff | 00000002 2f61 | 00000001 |" +
				"ffffffff 01 ffffffff", 9 + 6 + 4 + 4 + 4 + 9 + 10 + 4 + 9 + 6 + 4 + 9},
		{"ReplyHeader", &ReplyHeader{Xid: 5, Zxid: 0x100000002, Err: ErrNoNode}, "00000005 | 0000000100000002 | ffffff9b", ReplyHeaderSize},
		{"RequestHeader", &RequestHeader{Xid: XidPing, Type: OpPing}, "fffffffe 0000000b", RequestHeaderSize},
		{"SetWatches", &SetWatches{RelativeZxid: 3, DataWatches: []string{"/d"}},
			"0000000000000003 | 00000001 00000002 2f64 | 00000000 | 00000000", 8 + 10 + 8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := h(t, tc.hex)
			if len(want) != tc.size {
				t.Fatalf("bad test: expectation is %d bytes, size %d", len(want), tc.size)
			}
			got := tc.rec.Append(nil)
			if !bytes.Equal(got, want) {
				t.Fatalf("encoding\n got %x\nwant %x", got, want)
			}
		})
	}

	// A 44-byte ConnectRequest decodes with HasReadOnly false, a 45-byte one
	// with it true; the answer shape follows.
	short := h(t, cases[0].hex)
	var c ConnectRequest
	r := NewReader(short)
	c.Decode(r)
	if err := r.Complete(); err != nil || c.HasReadOnly || c.ReadOnly || !bytes.Equal(c.Passwd, pw()) || c.SessionID != 0x1122334455667788 {
		t.Fatalf("44-byte ConnectRequest: %+v, %v", c, err)
	}
	long := h(t, cases[1].hex)
	r = NewReader(long)
	c.Decode(r)
	if err := r.Complete(); err != nil || !c.HasReadOnly || !c.ReadOnly {
		t.Fatalf("45-byte ConnectRequest: %+v, %v", c, err)
	}
	resp := ConnectResponse{TimeOut: 1, Passwd: make([]byte, 16), HasReadOnly: c.HasReadOnly}
	if n := len(resp.Append(nil)); n != 37 {
		t.Fatalf("response to a 45-byte request is %d bytes", n)
	}
}

func TestFrames(t *testing.T) {
	// A failed multi reply: header err 0, the failure inside.
	got := AppendReply(nil, ReplyHeader{Xid: 5, Zxid: 0x10}, &MultiResponse{Results: []MultiResult{
		{Type: OpError, Err: ErrOK}, {Type: OpError, Err: ErrNodeExists}}})
	want := h(t, "00000033 | 00000005 0000000000000010 00000000 |"+
		"ffffffff 00 00000000 00000000 | ffffffff 00 ffffff92 ffffff92 | ffffffff 01 ffffffff")
	if !bytes.Equal(got, want) {
		t.Fatalf("multi reply\n got %x\nwant %x", got, want)
	}

	got = AppendNotification([]byte{9}, WatcherEvent{Type: EventNodeDataChanged, State: StateSyncConnected, Path: "/a"})
	want = h(t, "09 | 0000001e | ffffffff ffffffffffffffff 00000000 | 00000003 00000003 00000002 2f61")
	if !bytes.Equal(got, want) {
		t.Fatalf("notification\n got %x\nwant %x", got, want)
	}

	got = AppendReply(nil, ReplyHeader{Xid: XidPing, Zxid: 7}, nil)
	want = h(t, "00000010 | fffffffe 0000000000000007 00000000")
	if !bytes.Equal(got, want) {
		t.Fatalf("ping reply\n got %x\nwant %x", got, want)
	}

	got = AppendRequest(nil, RequestHeader{Xid: 1, Type: OpExists}, &ExistsRequest{Path: "/a", Watch: true})
	want = h(t, "0000000f | 00000001 00000003 | 00000002 2f61 01")
	if !bytes.Equal(got, want) {
		t.Fatalf("exists request\n got %x\nwant %x", got, want)
	}

	got = AppendFrame(nil, &ConnectResponse{Passwd: []byte{}})
	want = h(t, "00000014 | 00000000 00000000 0000000000000000 00000000")
	if !bytes.Equal(got, want) {
		t.Fatalf("connect frame\n got %x\nwant %x", got, want)
	}
}
