//go:build compat

package zkgo

import (
	"reflect"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
	"github.com/zkafka/zkafka/zkproto"
)

// TestSetWatchesOrderApache: the frames a reconnecting client gets for a
// setWatches whose watches missed two changes, in order, are the same from
// Apache ZooKeeper 3.8 and from zkafka: both events, then the reply.
func TestSetWatchesOrderApache(t *testing.T) {
	apache := zkserver.StartApache(t, zkserver.Options{})
	want := setWatchesFrames(t, apache.Addr())
	if w := []string{"NodeDataChanged /sw", "NodeDeleted /gone", "reply"}; !reflect.DeepEqual(want, w) {
		t.Fatalf("Apache ZooKeeper sent %v; this test expects %v", want, w)
	}
	if got := setWatchesFrames(t, startServer(t).addr); !reflect.DeepEqual(got, want) {
		t.Fatalf("zkafka sent %v, Apache ZooKeeper %v", got, want)
	}
}

// setWatchesFrames changes /sw and deletes /gone after a zxid, then sends
// setWatches with data watches on both from that zxid, and lists the
// frames up to the reply.
func setWatchesFrames(t *testing.T, addr string) []string {
	w, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	must[string](t)(w.Create("/sw", []byte("0"), 0, openACL))
	must[string](t)(w.Create("/gone", nil, 0, openACL))
	_, st, err := w.Exists("/sw")
	if err != nil {
		t.Fatal(err)
	}
	must[*zk.Stat](t)(w.Set("/sw", []byte("1"), -1))
	if err := w.Delete("/gone", -1); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, addr, zkproto.ConnectRequest{})
	rc.write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: zkproto.XidSetWatches, Type: zkproto.OpSetWatches},
		&zkproto.SetWatches{RelativeZxid: st.Mzxid, DataWatches: []string{"/sw", "/gone"}}))
	var out []string
	for len(out) < 3 {
		frame, err := rc.readFrame()
		if err != nil {
			t.Fatalf("after %v: %v", out, err)
		}
		r := zkproto.NewReader(frame)
		var h zkproto.ReplyHeader
		h.Decode(r)
		if h.Xid != zkproto.XidNotification {
			out = append(out, "reply")
			break
		}
		var ev zkproto.WatcherEvent
		ev.Decode(r)
		out = append(out, eventText(ev))
	}
	return out
}

func eventText(ev zkproto.WatcherEvent) string {
	names := map[zkproto.EventType]string{zkproto.EventNodeDataChanged: "NodeDataChanged", zkproto.EventNodeDeleted: "NodeDeleted"}
	return names[ev.Type] + " " + ev.Path
}
