package zkgo

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/zkproto"
)

func TestOneShotWatches(t *testing.T) {
	ts := startServer(t)
	c, _ := ts.connect(5 * time.Second)
	writer, _ := ts.connect(5 * time.Second)

	_, _, created, err := c.ExistsW("/w")
	if err != nil {
		t.Fatal(err)
	}
	must[string](t)(writer.Create("/w", []byte("0"), 0, openACL))
	if ev := waitEvent(t, created); ev.Type != zk.EventNodeCreated || ev.Path != "/w" {
		t.Fatalf("exists watch: %+v", ev)
	}

	_, _, changed, err := c.GetW("/w")
	if err != nil {
		t.Fatal(err)
	}
	_, _, kids, err := c.ChildrenW("/w")
	if err != nil {
		t.Fatal(err)
	}
	must[*zk.Stat](t)(writer.Set("/w", []byte("1"), -1))
	if ev := waitEvent(t, changed); ev.Type != zk.EventNodeDataChanged {
		t.Fatalf("data watch: %+v", ev)
	}
	must[string](t)(writer.Create("/w/k", nil, 0, openACL))
	if ev := waitEvent(t, kids); ev.Type != zk.EventNodeChildrenChanged || ev.Path != "/w" {
		t.Fatalf("child watch: %+v", ev)
	}

	// One-shot: a second change fires nothing on the spent watches; a new
	// data watch sees the delete.
	_, _, deleted, err := c.GetW("/w/k")
	if err != nil {
		t.Fatal(err)
	}
	must[*zk.Stat](t)(writer.Set("/w", []byte("2"), -1))
	if err := writer.Delete("/w/k", -1); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, deleted); ev.Type != zk.EventNodeDeleted || ev.Path != "/w/k" {
		t.Fatalf("delete watch: %+v", ev)
	}
	// go-zookeeper closes a watch's channel after its one event: a second
	// event would arrive as a value, not as the close.
	for name, ch := range map[string]<-chan zk.Event{"data": changed, "child": kids} {
		if ev, open := <-ch; open {
			t.Fatalf("spent %s watch fired again: %+v", name, ev)
		}
	}
}

func TestWatchEventBeforeReadOfNewData(t *testing.T) {
	ts := startServer(t)
	rc := dialRaw(t, ts.addr, zkproto.ConnectRequest{})
	rc.call(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/order", Data: []byte("a"), ACL: zkproto.OpenACLUnsafe})
	rc.call(zkproto.OpGetData, &zkproto.GetDataRequest{Path: "/order", Watch: true})
	h, _, events := rc.call(zkproto.OpSetData, &zkproto.SetDataRequest{Path: "/order", Data: []byte("b"), Version: -1})
	if h.Err != zkproto.ErrOK {
		t.Fatal(h.Err)
	}
	if len(events) != 1 || events[0].Type != zkproto.EventNodeDataChanged {
		t.Fatalf("the notification must precede the reply of the write that caused it: %+v", events)
	}
}

func TestPersistentAndRecursiveWatches(t *testing.T) {
	ts := startServer(t)
	writer, _ := ts.connect(5 * time.Second)
	must[string](t)(writer.Create("/pw", nil, 0, openACL))
	rc := dialRaw(t, ts.addr, zkproto.ConnectRequest{})
	if h, _, _ := rc.call(zkproto.OpAddWatch, &zkproto.AddWatchRequest{Path: "/pw", Mode: zkproto.AddWatchPersistent}); h.Err != zkproto.ErrOK {
		t.Fatal(h.Err)
	}
	rec := dialRaw(t, ts.addr, zkproto.ConnectRequest{})
	if h, _, _ := rec.call(zkproto.OpAddWatch, &zkproto.AddWatchRequest{Path: "/pw", Mode: zkproto.AddWatchPersistentRecursive}); h.Err != zkproto.ErrOK {
		t.Fatal(h.Err)
	}
	must[*zk.Stat](t)(writer.Set("/pw", []byte("1"), -1))
	must[*zk.Stat](t)(writer.Set("/pw", []byte("2"), -1))
	must[string](t)(writer.Create("/pw/a", nil, 0, openACL))
	must[string](t)(writer.Create("/pw/a/b", nil, 0, openACL))

	want := []zkproto.WatcherEvent{
		{Type: zkproto.EventNodeDataChanged, Path: "/pw"},
		{Type: zkproto.EventNodeDataChanged, Path: "/pw"},
		{Type: zkproto.EventNodeChildrenChanged, Path: "/pw"},
	}
	for i, w := range want {
		if ev := rc.nextEvent(); ev.Type != w.Type || ev.Path != w.Path {
			t.Fatalf("persistent watch event %d: %+v, want %+v", i, ev, w)
		}
	}
	wantRec := []zkproto.WatcherEvent{
		{Type: zkproto.EventNodeDataChanged, Path: "/pw"},
		{Type: zkproto.EventNodeDataChanged, Path: "/pw"},
		{Type: zkproto.EventNodeCreated, Path: "/pw/a"},
		{Type: zkproto.EventNodeCreated, Path: "/pw/a/b"},
	}
	for i, w := range wantRec {
		if ev := rec.nextEvent(); ev.Type != w.Type || ev.Path != w.Path {
			t.Fatalf("recursive watch event %d: %+v, want %+v", i, ev, w)
		}
	}
	if h, _, _ := rc.call(zkproto.OpRemoveWatches, &zkproto.RemoveWatchesRequest{Path: "/pw", Type: zkproto.WatcherAny}); h.Err != zkproto.ErrOK {
		t.Fatalf("remove persistent watch: %v", h.Err)
	}
	if h, _, _ := rc.call(zkproto.OpCheckWatches, &zkproto.CheckWatchesRequest{Path: "/pw", Type: zkproto.WatcherAny}); h.Err != zkproto.ErrNoWatcher {
		t.Fatalf("check after remove: %v, want NoWatcher", h.Err)
	}
}

func TestSetWatchesFiresMissedEvents(t *testing.T) {
	ts := startServer(t)
	writer, _ := ts.connect(5 * time.Second)
	must[string](t)(writer.Create("/sw", []byte("0"), 0, openACL))
	must[string](t)(writer.Create("/gone", nil, 0, openACL))
	_, st, _ := writer.Exists("/sw")
	must[*zk.Stat](t)(writer.Set("/sw", []byte("1"), -1))
	if err := writer.Delete("/gone", -1); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, ts.addr, zkproto.ConnectRequest{})
	rc.write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: zkproto.XidSetWatches, Type: zkproto.OpSetWatches},
		&zkproto.SetWatches{RelativeZxid: st.Mzxid, DataWatches: []string{"/sw", "/gone"}, ExistWatches: []string{"/never"}}))
	// ZooKeeper sends the missed events as setWatches fires them, before
	// its reply (FinalRequestProcessor answers after DataTree.setWatches).
	got := map[string]zkproto.EventType{}
	for replied := false; !replied; {
		frame, err := rc.readFrame()
		if err != nil {
			t.Fatal(err)
		}
		r := zkproto.NewReader(frame)
		var h zkproto.ReplyHeader
		h.Decode(r)
		if h.Xid != zkproto.XidNotification {
			replied = true
			if len(got) < 2 {
				t.Fatalf("setWatches answered after %d of its 2 missed events: %v", len(got), got)
			}
			continue
		}
		var ev zkproto.WatcherEvent
		ev.Decode(r)
		got[ev.Path] = ev.Type
	}
	if got["/sw"] != zkproto.EventNodeDataChanged || got["/gone"] != zkproto.EventNodeDeleted {
		t.Fatalf("missed events: %v", got)
	}
	must[string](t)(writer.Create("/never", nil, 0, openACL))
	if ev := rc.nextEvent(); ev.Type != zkproto.EventNodeCreated || ev.Path != "/never" {
		t.Fatalf("re-registered exist watch: %+v", ev)
	}
}
