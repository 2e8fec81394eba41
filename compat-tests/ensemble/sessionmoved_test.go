package ensemble

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
	"github.com/zkafka/zkafka/zkproto"
)

// TestSessionMoved: a session that reattaches to another server moves there
// (the new server revalidates it through the log, as ZooKeeper's
// Learner.validateSession does through the leader); a write that then
// arrives through the old server's connection fails with SessionMoved, is
// not applied, and that connection is closed without a reply, as ZooKeeper
// closes it (FinalRequestProcessor: sendCloseSession). The session itself
// lives on through its new connection. compat-tests/ensemble's compat build
// runs the same scenario against an Apache ZooKeeper ensemble.
func TestSessionMoved(t *testing.T) {
	e := startEnsemble(t, 3, 0, nil)
	sessionMovedScenario(t, e)
}

// sessionMovedScenario runs between two followers of e, where ZooKeeper's
// behaviour does not depend on which server leads.
func sessionMovedScenario(t *testing.T, e *zkserver.Ensemble) {
	leader := e.WaitLeader(tickTime * 10)
	if leader == nil {
		t.Fatalf("no leader: %s", modes(e))
	}
	var followers []*zkserver.Server
	for _, s := range e.Servers {
		if s != leader {
			followers = append(followers, s)
		}
	}
	oldSrv, newSrv := followers[0], followers[1]
	open := zkproto.OpenACLUnsafe

	old := dialRaw(t, oldSrv.Addr(), zkproto.ConnectRequest{TimeOut: 6000})
	if old.Session.TimeOut <= 0 || old.Session.SessionID == 0 {
		t.Fatalf("no session on %s: %+v", oldSrv.Addr(), old.Session)
	}
	if h, _ := old.call(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/moved", Data: []byte("old"), ACL: open}); h.Err != zkproto.ErrOK {
		t.Fatalf("create /moved through the first server: %v", h.Err)
	}
	if h, _ := old.call(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/moved/eph", ACL: open, Flags: zkproto.ModeEphemeral}); h.Err != zkproto.ErrOK {
		t.Fatalf("create an ephemeral through the first server: %v", h.Err)
	}

	// The same session, reattached through another server.
	moved := dialRaw(t, newSrv.Addr(), zkproto.ConnectRequest{
		TimeOut: 6000, SessionID: old.Session.SessionID, Passwd: old.Session.Passwd, LastZxidSeen: 0})
	if moved.Session.SessionID != old.Session.SessionID || moved.Session.TimeOut <= 0 {
		t.Fatalf("reattach on %s: %+v, want session 0x%x", newSrv.Addr(), moved.Session, old.Session.SessionID)
	}
	if h, _ := moved.call(zkproto.OpSetData, &zkproto.SetDataRequest{Path: "/moved", Data: []byte("new"), Version: -1}); h.Err != zkproto.ErrOK {
		t.Fatalf("write through the new server: %v", h.Err)
	}

	// A write through the old connection: no reply, the connection closes.
	h, _, err := old.tryCall(zkproto.OpSetData, &zkproto.SetDataRequest{Path: "/moved", Data: []byte("stale"), Version: -1})
	switch {
	case errors.Is(err, errClosed):
	case err != nil:
		t.Fatalf("write through the old server: %v; want the connection closed", err)
	default:
		t.Fatalf("write through the old server answered err %d (%v); want the connection closed without a reply", h.Err, h.Err)
	}

	// The refused write is nowhere; the session and its ephemeral live on.
	h2, r := moved.call(zkproto.OpSync, &zkproto.SyncRequest{Path: "/moved"})
	if h2.Err != zkproto.ErrOK {
		t.Fatalf("sync on the new server: %v", h2.Err)
	}
	h2, r = moved.call(zkproto.OpGetData, &zkproto.GetDataRequest{Path: "/moved"})
	var got zkproto.GetDataResponse
	got.Decode(r)
	if h2.Err != zkproto.ErrOK || !bytes.Equal(got.Data, []byte("new")) || got.Stat.Version != 1 {
		t.Fatalf("/moved after the refused write: %q version %d (%v); want \"new\" version 1", got.Data, got.Stat.Version, h2.Err)
	}
	if h2, _ = moved.call(zkproto.OpExists, &zkproto.ExistsRequest{Path: "/moved/eph"}); h2.Err != zkproto.ErrOK {
		t.Fatalf("the session's ephemeral after the move: %v", h2.Err)
	}
	if h2, _ = moved.call(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/moved/after", ACL: open}); h2.Err != zkproto.ErrOK {
		t.Fatalf("write through the new server after the refusal: %v", h2.Err)
	}
	// Moving back works too: the first server owns the session again. It
	// refuses the client until it has applied what the client has seen.
	var back *rawClient
	waitFor(t, 5*time.Second, "reattach to the first server", func() error {
		var err error
		back, err = tryDialRaw(t, oldSrv.Addr(), zkproto.ConnectRequest{
			TimeOut: 6000, SessionID: old.Session.SessionID, Passwd: old.Session.Passwd, LastZxidSeen: h2.Zxid})
		return err
	})
	if back.Session.SessionID != old.Session.SessionID {
		t.Fatalf("reattach to the first server: %+v", back.Session)
	}
	if h3, _ := back.call(zkproto.OpDelete, &zkproto.DeleteRequest{Path: "/moved/after", Version: -1}); h3.Err != zkproto.ErrOK {
		t.Fatalf("write after moving back: %v", h3.Err)
	}
	if _, _, err := moved.tryCall(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/moved/late", ACL: open}); !errors.Is(err, errClosed) {
		t.Fatalf("a write through the second server after moving back: %v; want the connection closed", err)
	}
}
