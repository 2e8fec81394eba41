package zkgo

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/zkproto"
)

func TestConnectShapesAndTimeoutBounds(t *testing.T) {
	ts := startServer(t)
	old := dialRaw(t, ts.addr, zkproto.ConnectRequest{TimeOut: 1})
	if old.Session.HasReadOnly {
		t.Fatal("a 44-byte connect request was answered with the readOnly byte")
	}
	if old.Session.TimeOut != int32(2*ts.cfg.TickTime/time.Millisecond) {
		t.Fatalf("timeout %d, want the minimum 2*tickTime", old.Session.TimeOut)
	}
	withRO := dialRaw(t, ts.addr, zkproto.ConnectRequest{TimeOut: 1 << 30, HasReadOnly: true})
	if !withRO.Session.HasReadOnly {
		t.Fatal("a 45-byte connect request was answered without the readOnly byte")
	}
	if withRO.Session.TimeOut != int32(20*ts.cfg.TickTime/time.Millisecond) {
		t.Fatalf("timeout %d, want the maximum 20*tickTime", withRO.Session.TimeOut)
	}
	if old.Session.SessionID == 0 || old.Session.SessionID == withRO.Session.SessionID {
		t.Fatalf("session ids %x %x", old.Session.SessionID, withRO.Session.SessionID)
	}
}

func TestResumeSessionAndWrongPassword(t *testing.T) {
	ts := startServer(t)
	first := dialRaw(t, ts.addr, zkproto.ConnectRequest{TimeOut: 1500})
	h, _, _ := first.call(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/mine", ACL: zkproto.OpenACLUnsafe, Flags: zkproto.ModeEphemeral})
	if h.Err != zkproto.ErrOK {
		t.Fatalf("create ephemeral: %v", h.Err)
	}
	first.nc.Close()

	bad := dialRaw(t, ts.addr, zkproto.ConnectRequest{SessionID: first.Session.SessionID, Passwd: bytes.Repeat([]byte{1}, 16)})
	if bad.Session.TimeOut != 0 || !bad.closed() {
		t.Fatalf("wrong password: timeout %d, want 0 and a close", bad.Session.TimeOut)
	}
	again := dialRaw(t, ts.addr, zkproto.ConnectRequest{SessionID: first.Session.SessionID, Passwd: first.Session.Passwd, LastZxidSeen: h.Zxid})
	if again.Session.SessionID != first.Session.SessionID || again.Session.TimeOut == 0 {
		t.Fatalf("resume: %+v", again.Session)
	}
	h, r, _ := again.call(zkproto.OpExists, &zkproto.ExistsRequest{Path: "/mine"})
	var st zkproto.Stat
	st.Decode(r)
	if h.Err != zkproto.ErrOK || st.EphemeralOwner != first.Session.SessionID {
		t.Fatalf("ephemeral after resume: %v owner %x", h.Err, st.EphemeralOwner)
	}
}

func TestClientAheadOfServerIsRefused(t *testing.T) {
	ts := startServer(t)
	rc := dialRawNoReply(t, ts.addr, zkproto.ConnectRequest{LastZxidSeen: 1 << 40, TimeOut: 4000, Passwd: make([]byte, 16)})
	if !rc {
		t.Fatal("a client that has seen a newer zxid was not refused")
	}
}

// dialRawNoReply sends a connect request and reports whether the server
// closed the connection without answering.
func dialRawNoReply(t *testing.T, addr string, req zkproto.ConnectRequest) bool {
	rc := &rawClient{t: t}
	nc, err := netDial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	rc.nc = nc
	rc.br = newReader(nc)
	rc.write(zkproto.AppendFrame(nil, &req))
	_, err = rc.readFrame()
	return err != nil && !isTimeout(err)
}

func TestSessionExpiryRemovesEphemeralsAndFiresWatches(t *testing.T) {
	ts := startServer(t)
	doomed := dialRaw(t, ts.addr, zkproto.ConnectRequest{TimeOut: 400})
	h, _, _ := doomed.call(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/lease", ACL: zkproto.OpenACLUnsafe, Flags: zkproto.ModeEphemeral})
	if h.Err != zkproto.ErrOK {
		t.Fatal(h.Err)
	}
	watcher, _ := ts.connect(5 * time.Second)
	_, _, ch, err := watcher.ExistsW("/lease")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	doomed.nc.Close() // the client dies without closing its session
	ev := waitEvent(t, ch)
	if ev.Type != zk.EventNodeDeleted {
		t.Fatalf("event %+v", ev)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Fatalf("ephemeral removed after %v, before the session timeout", waited)
	}
	again := dialRaw(t, ts.addr, zkproto.ConnectRequest{SessionID: doomed.Session.SessionID, Passwd: doomed.Session.Passwd})
	if again.Session.TimeOut != 0 {
		t.Fatalf("expired session resumed: %+v", again.Session)
	}
}

func TestServerRestartKeepsSessionsAndData(t *testing.T) {
	ts := startServer(t)
	c, events := ts.connect(4 * time.Second)
	must[string](t)(c.Create("/durable", []byte("d"), 0, openACL))
	must[string](t)(c.Create("/held", nil, zk.FlagEphemeral, openACL))
	sid := c.SessionID()
	ts.restart()
	waitState(t, events, zk.StateHasSession)
	if c.SessionID() != sid {
		t.Fatalf("session changed across restart: %x → %x", sid, c.SessionID())
	}
	data, _, err := c.Get("/durable")
	if err != nil || string(data) != "d" {
		t.Fatalf("data after restart: %q %v", data, err)
	}
	_, st, err := c.Exists("/held")
	if err != nil || st.EphemeralOwner != sid {
		t.Fatalf("ephemeral after restart: %+v %v", st, err)
	}
	if _, err := c.Create("/after", nil, 0, openACL); err != nil {
		t.Fatal(err)
	}
	_, st2, _ := c.Exists("/after")
	_, st1, _ := c.Exists("/durable")
	if st2.Czxid <= st1.Czxid {
		t.Fatalf("zxid went backwards across restart: %d then %d", st1.Czxid, st2.Czxid)
	}
}

func TestCloseSessionIsImmediate(t *testing.T) {
	ts := startServer(t)
	c, _ := ts.connect(30 * time.Second)
	other, _ := ts.connect(5 * time.Second)
	must[string](t)(c.Create("/bye", nil, zk.FlagEphemeral, openACL))
	c.Close()
	checkFor(t, 2*time.Second, "ephemeral gone after close", func() bool {
		ok, _, err := other.Exists("/bye")
		return err == nil && !ok
	})
	if _, _, err := c.Get("/"); !errors.Is(err, zk.ErrClosing) && !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("request on a closed client: %v", err)
	}
}
