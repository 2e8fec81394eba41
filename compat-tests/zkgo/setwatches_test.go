package zkgo

import (
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

// TestSetWatchesReplyXid: ZooKeeper answers setWatches and setWatches2 with
// the xid the request carried (FinalRequestProcessor builds every reply
// header from request.cxid). go-zookeeper always sends xid -8, so only a raw
// client shows a server that answers -8 whatever it got.
func TestSetWatchesReplyXid(t *testing.T) {
	ts := startServer(t)
	checkSetWatchesReplyXid(t, ts.addr)
}

// checkSetWatchesReplyXid sends setWatches and setWatches2 with xids other
// than -8 (and once with -8) and checks each reply's xid and error, and that
// the re-armed watch fires.
func checkSetWatchesReplyXid(t *testing.T, addr string) {
	t.Helper()
	rc := dialRaw(t, addr, zkproto.ConnectRequest{})
	cases := []struct {
		op  zkproto.OpCode
		xid int32
		req zkproto.Record
	}{
		{zkproto.OpSetWatches, 7, &zkproto.SetWatches{DataWatches: []string{"/sw-a"}}},
		{zkproto.OpSetWatches2, 8, &zkproto.SetWatches2{ExistWatches: []string{"/sw-b"}}},
		{zkproto.OpSetWatches, zkproto.XidSetWatches, &zkproto.SetWatches{ChildWatches: []string{"/"}}},
		{zkproto.OpSetWatches2, 1234567, &zkproto.SetWatches2{}},
	}
	for _, c := range cases {
		rc.write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: c.xid, Type: c.op}, c.req))
		var h zkproto.ReplyHeader
		for h.Xid = zkproto.XidNotification; h.Xid == zkproto.XidNotification; {
			// setWatches may fire at once (a data watch on a missing
			// node): the events come before the reply.
			frame, err := rc.readFrame()
			if err != nil {
				t.Fatalf("reply to op %d xid %d: %v", c.op, c.xid, err)
			}
			h.Decode(zkproto.NewReader(frame))
		}
		if h.Xid != c.xid || h.Err != zkproto.ErrOK {
			t.Errorf("op %d sent with xid %d: reply xid %d err %d, want xid %d err 0", c.op, c.xid, h.Xid, h.Err, c.xid)
		}
	}
	// The exist watch set with setWatches2 is armed: creating the node fires it.
	rc.xid = 100
	h, _, events := rc.call(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/sw-b", ACL: []zkproto.ACL{{Perms: zkproto.PermAll, ID: zkproto.ID{Scheme: "world", ID: "anyone"}}}})
	if h.Err != zkproto.ErrOK {
		t.Fatalf("create /sw-b: err %d", h.Err)
	}
	fired := false
	for _, ev := range events {
		fired = fired || ev.Path == "/sw-b" && ev.Type == zkproto.EventNodeCreated
	}
	if !fired {
		t.Errorf("the exist watch set by setWatches2 did not fire before the create reply: %+v", events)
	}
}
