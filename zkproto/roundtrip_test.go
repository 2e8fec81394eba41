package zkproto

import (
	"errors"
	"reflect"
	"testing"
)

var testStat = Stat{
	Czxid: 0x100000002, Mzxid: 0x100000003, Ctime: 1700000000000, Mtime: 1700000000001,
	Version: 3, Cversion: 4, Aversion: 5, EphemeralOwner: 0x1000a0b0c0d0e0f,
	DataLength: 6, NumChildren: 7, Pzxid: 0x100000008,
}

var testACL = []ACL{
	{Perms: PermAll, ID: AnyoneIDUnsafe},
	{Perms: PermRead | PermAdmin, ID: ID{Scheme: "digest", ID: "user:hash="}},
}

// roundTripCases has one value of every record. Empty vectors are nil and
// empty buffers []byte{} so that decoding yields the same value.
func roundTripCases() []struct {
	name string
	rec  Record
} {
	return []struct {
		name string
		rec  Record
	}{
		{"RequestHeader", &RequestHeader{Xid: 7, Type: OpGetData}},
		{"ReplyHeader", &ReplyHeader{Xid: 7, Zxid: 0x200000001, Err: ErrNoNode}},
		{"ErrorResponse", &ErrorResponse{Err: ErrBadVersion}},
		{"Stat", &testStat},
		{"Empty", &Empty{}},
		{"ConnectRequest/44", &ConnectRequest{ProtocolVersion: 0, LastZxidSeen: 9, TimeOut: 30000, SessionID: 0x1234, Passwd: make([]byte, 16)}},
		{"ConnectRequest/45", &ConnectRequest{TimeOut: 4000, Passwd: []byte("0123456789abcdef"), ReadOnly: true, HasReadOnly: true}},
		{"ConnectRequest/nullpw", &ConnectRequest{TimeOut: 4000, HasReadOnly: true}},
		{"ConnectResponse/36", &ConnectResponse{TimeOut: 30000, SessionID: 0x1234, Passwd: make([]byte, 16)}},
		{"ConnectResponse/37", &ConnectResponse{TimeOut: 30000, SessionID: 0x1234, Passwd: make([]byte, 16), HasReadOnly: true}},
		{"CreateRequest", &CreateRequest{Path: "/a/b", Data: []byte("x"), ACL: testACL, Flags: ModeEphemeralSequential}},
		{"CreateRequest/null", &CreateRequest{Path: "/a"}},
		{"CreateTTLRequest", &CreateTTLRequest{Path: "/t", Data: []byte{}, ACL: OpenACLUnsafe, Flags: ModePersistentWithTTL, TTL: 60000}},
		{"DeleteRequest", &DeleteRequest{Path: "/a", Version: -1}},
		{"DeleteContainerRequest", &DeleteContainerRequest{Path: "/c"}},
		{"ExistsRequest", &ExistsRequest{Path: "/a", Watch: true}},
		{"GetDataRequest", &GetDataRequest{Path: "/a", Watch: true}},
		{"SetDataRequest", &SetDataRequest{Path: "/a", Data: []byte("v2"), Version: 2}},
		{"GetACLRequest", &GetACLRequest{Path: "/a"}},
		{"SetACLRequest", &SetACLRequest{Path: "/a", ACL: testACL, Version: -1}},
		{"GetChildrenRequest", &GetChildrenRequest{Path: "/", Watch: true}},
		{"GetAllChildrenNumberRequest", &GetAllChildrenNumberRequest{Path: "/"}},
		{"GetEphemeralsRequest", &GetEphemeralsRequest{PrefixPath: "/brokers"}},
		{"SyncRequest", &SyncRequest{Path: "/a"}},
		{"CheckVersionRequest", &CheckVersionRequest{Path: "/a", Version: 5}},
		{"ReconfigRequest", &ReconfigRequest{JoiningServers: "server.4=h:1:2", NewMembers: "", CurConfigID: -1}},
		{"CreateResponse", &CreateResponse{Path: "/a/b0000000001"}},
		{"Create2Response", &Create2Response{Path: "/a", Stat: testStat}},
		{"ExistsResponse", &ExistsResponse{Stat: testStat}},
		{"GetDataResponse", &GetDataResponse{Data: []byte("hello"), Stat: testStat}},
		{"GetDataResponse/null", &GetDataResponse{Stat: testStat}},
		{"SetDataResponse", &SetDataResponse{Stat: testStat}},
		{"GetACLResponse", &GetACLResponse{ACL: testACL, Stat: testStat}},
		{"SetACLResponse", &SetACLResponse{Stat: testStat}},
		{"GetChildrenResponse", &GetChildrenResponse{Children: []string{"a", "b", ""}}},
		{"GetChildrenResponse/empty", &GetChildrenResponse{}},
		{"GetChildren2Response", &GetChildren2Response{Children: []string{"z"}, Stat: testStat}},
		{"GetAllChildrenNumberResponse", &GetAllChildrenNumberResponse{TotalNumber: 42}},
		{"GetEphemeralsResponse", &GetEphemeralsResponse{Ephemerals: []string{"/e1", "/e2"}}},
		{"SyncResponse", &SyncResponse{Path: "/a"}},
		{"SetWatches", &SetWatches{RelativeZxid: 77, DataWatches: []string{"/d"}, ChildWatches: []string{"/c", "/c2"}}},
		{"SetWatches2", &SetWatches2{RelativeZxid: 78, ExistWatches: []string{"/x"}, PersistentWatches: []string{"/p"}, PersistentRecursiveWatches: []string{"/r"}}},
		{"AddWatchRequest", &AddWatchRequest{Path: "/w", Mode: AddWatchPersistentRecursive}},
		{"CheckWatchesRequest", &CheckWatchesRequest{Path: "/w", Type: WatcherData}},
		{"RemoveWatchesRequest", &RemoveWatchesRequest{Path: "/w", Type: WatcherAny}},
		{"WatcherEvent", &WatcherEvent{Type: EventNodeDataChanged, State: StateSyncConnected, Path: "/a"}},
		{"AuthPacket", &AuthPacket{Scheme: "digest", Auth: []byte("user:pw")}},
		{"WhoAmIResponse", &WhoAmIResponse{ClientInfo: []ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}, {AuthScheme: "digest", User: "u"}}}},
		{"WhoAmIResponse/empty", &WhoAmIResponse{}},
		{"GetSASLRequest", &GetSASLRequest{Token: []byte{1, 2, 3}}},
		{"SetSASLResponse", &SetSASLResponse{Token: []byte{4}}},
		{"MultiHeader", &MultiHeader{Type: OpSetData, Err: -1}},
		{"MultiRequest/write", &MultiRequest{Ops: []MultiOp{
			{Type: OpCreate, Op: &CreateRequest{Path: "/m", Data: []byte("d"), ACL: OpenACLUnsafe}},
			{Type: OpCreate2, Op: &CreateRequest{Path: "/m2", ACL: OpenACLUnsafe, Flags: ModeEphemeral}},
			{Type: OpCreateContainer, Op: &CreateRequest{Path: "/m3", ACL: OpenACLUnsafe, Flags: ModeContainer}},
			{Type: OpCreateTTL, Op: &CreateTTLRequest{Path: "/m4", ACL: OpenACLUnsafe, Flags: ModePersistentWithTTL, TTL: 5}},
			{Type: OpCheck, Op: &CheckVersionRequest{Path: "/m", Version: 0}},
			{Type: OpSetData, Op: &SetDataRequest{Path: "/m", Data: []byte("e"), Version: 0}},
			{Type: OpDelete, Op: &DeleteRequest{Path: "/m", Version: -1}},
		}}},
		{"MultiRequest/read", &MultiRequest{Ops: []MultiOp{
			{Type: OpGetChildren, Op: &GetChildrenRequest{Path: "/"}},
			{Type: OpGetData, Op: &GetDataRequest{Path: "/a"}},
		}}},
		{"MultiRequest/empty", &MultiRequest{}},
		{"MultiResponse/ok", &MultiResponse{Results: []MultiResult{
			{Type: OpCreate, Path: "/m"},
			{Type: OpCreate2, Path: "/m2", Stat: testStat},
			{Type: OpCheck},
			{Type: OpSetData, Stat: testStat},
			{Type: OpDelete},
		}}},
		{"MultiResponse/read", &MultiResponse{Results: []MultiResult{
			{Type: OpGetChildren, Children: []string{"a"}},
			{Type: OpGetData, Data: []byte("x"), Stat: testStat},
			{Type: OpError, Err: ErrNoNode},
		}}},
		{"MultiResponse/failed", &MultiResponse{Results: []MultiResult{
			{Type: OpError, Err: ErrOK}, {Type: OpError, Err: ErrNodeExists}, {Type: OpError, Err: ErrRuntimeInconsistency},
		}}},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range roundTripCases() {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.rec.Append(nil)
			got := reflect.New(reflect.TypeOf(tc.rec).Elem()).Interface().(Record)
			r := NewReader(b)
			got.Decode(r)
			if err := r.Complete(); err != nil {
				t.Fatalf("decode %x: %v", b, err)
			}
			if !reflect.DeepEqual(got, tc.rec) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.rec)
			}
			// Appending after existing bytes must not disturb them.
			b2 := tc.rec.Append([]byte{0xAA})
			if b2[0] != 0xAA || string(b2[1:]) != string(b) {
				t.Fatalf("Append with a prefix differs")
			}
		})
	}
}

// TestTruncated checks that every strict prefix of a record fails to decode,
// except where a prefix is itself a valid encoding.
func TestTruncated(t *testing.T) {
	for _, tc := range roundTripCases() {
		switch tc.rec.(type) {
		case *Empty, *DeleteContainerRequest, *ConnectRequest, *ConnectResponse:
			continue // no body, raw body, optional trailing byte
		}
		b := tc.rec.Append(nil)
		for n := 0; n < len(b); n++ {
			got := reflect.New(reflect.TypeOf(tc.rec).Elem()).Interface().(Record)
			r := NewReader(b[:n])
			got.Decode(r)
			if r.Err() == nil {
				t.Errorf("%s: prefix of %d/%d bytes decoded without error", tc.name, n, len(b))
			}
		}
	}
}

// requestSamples has one request of every opcode a client may send.
func requestSamples() map[OpCode]Record {
	return map[OpCode]Record{
		OpCreate: &CreateRequest{Path: "/a", ACL: OpenACLUnsafe}, OpCreate2: &CreateRequest{Path: "/b"},
		OpCreateContainer: &CreateRequest{Path: "/c", Flags: ModeContainer},
		OpCreateTTL:       &CreateTTLRequest{Path: "/t", TTL: 1}, OpDelete: &DeleteRequest{Path: "/a"},
		OpDeleteContainer: &DeleteContainerRequest{Path: "/c"}, OpExists: &ExistsRequest{Path: "/a"},
		OpGetData: &GetDataRequest{Path: "/a"}, OpSetData: &SetDataRequest{Path: "/a", Data: []byte{}},
		OpGetACL: &GetACLRequest{Path: "/a"}, OpSetACL: &SetACLRequest{Path: "/a", ACL: testACL},
		OpGetChildren: &GetChildrenRequest{Path: "/"}, OpGetChildren2: &GetChildrenRequest{Path: "/", Watch: true},
		OpSync: &SyncRequest{Path: "/"}, OpPing: &Empty{}, OpCloseSession: &Empty{}, OpWhoAmI: &Empty{},
		OpMulti:     &MultiRequest{Ops: []MultiOp{{Type: OpDelete, Op: &DeleteRequest{Path: "/a"}}}},
		OpMultiRead: &MultiRequest{Ops: []MultiOp{{Type: OpGetData, Op: &GetDataRequest{Path: "/a"}}}},
		OpReconfig:  &ReconfigRequest{}, OpCheckWatches: &CheckWatchesRequest{Path: "/"},
		OpRemoveWatches: &RemoveWatchesRequest{Path: "/"}, OpAuth: &AuthPacket{Scheme: "digest"},
		OpSetWatches: &SetWatches{RelativeZxid: 1}, OpSetWatches2: &SetWatches2{RelativeZxid: 2},
		OpSASL: &GetSASLRequest{Token: []byte{1}}, OpGetEphemerals: &GetEphemeralsRequest{PrefixPath: "/"},
		OpGetAllChildrenNumber: &GetAllChildrenNumberRequest{Path: "/"}, OpAddWatch: &AddWatchRequest{Path: "/"},
	}
}

// TestDecodeRequestTypes checks the record type DecodeRequest picks for
// every opcode, and that it round-trips a request of that type.
func TestDecodeRequestTypes(t *testing.T) {
	want := requestSamples()
	for op, rec := range want {
		got, err := DecodeRequest(op, rec.Append(nil))
		if err != nil {
			t.Errorf("op %d: %v", op, err)
			continue
		}
		if !reflect.DeepEqual(got, rec) {
			t.Errorf("op %d: got %#v, want %#v", op, got, rec)
		}
	}
	for _, op := range []OpCode{OpNotification, OpCheck, OpCreateSession, OpError, 10, 23, 99, 108, -12} {
		if _, err := DecodeRequest(op, nil); err == nil || !errors.Is(err, ErrUnknownOpcode) {
			t.Errorf("op %d: err %v, want ErrUnknownOpcode", op, err)
		}
	}
	// Trailing bytes are ignored, as by ZooKeeper; truncation is an error.
	body := (&GetDataRequest{Path: "/a", Watch: true}).Append(nil)
	if _, err := DecodeRequest(OpGetData, append(body, 0xde, 0xad)); err != nil {
		t.Errorf("trailing bytes: %v", err)
	}
	if _, err := DecodeRequest(OpGetData, body[:len(body)-1]); err == nil {
		t.Errorf("truncated getData decoded")
	}
}
