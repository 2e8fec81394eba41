package ensemble

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
	"github.com/zkafka/zkafka/zkproto"
)

// TestObserver runs three voters and one observer: the observer serves
// reads and forwards writes, reports Mode: observer, and its loss changes
// nothing for the quorum.
func TestObserver(t *testing.T) {
	e := startEnsemble(t, 3, 1, nil)
	obs := e.Servers[3]
	waitFor(t, 5*time.Second, "observer mode", func() error {
		if m := obs.Mode(); m != "observer" {
			return fmt.Errorf("modes %s", modes(e))
		}
		return nil
	})
	leader := e.WaitLeader(5 * time.Second)
	if leader == nil {
		t.Fatalf("no leader: %s", modes(e))
	}
	c := dial(t, []string{obs.Addr()}, 4*time.Second)
	if _, err := c.Create("/obs", []byte("via observer"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("write through the observer: %v", err)
	}
	if d, _, err := c.Get("/obs"); err != nil || string(d) != "via observer" {
		t.Fatalf("read on the observer: %q, %v", d, err)
	}
	waitFor(t, 5*time.Second, "the leader counts a synced observer", func() error {
		if l := e.Leader(); l != nil {
			leader = l
		}
		out, err := zkserver.FourLetterWord(leader.Addr(), "mntr", 3*time.Second)
		if !strings.Contains(out, "zk_synced_observers\t1") || !strings.Contains(out, "zk_synced_followers\t2") {
			return fmt.Errorf("mntr of server %d (%v):\n%s", leader.ID(), err, out)
		}
		return nil
	})
	agree(t, e, "/")
	obs.Kill()
	v := dial(t, e.Addrs()[:3], 4*time.Second)
	for i := range 20 {
		if _, err := v.Create(fmt.Sprintf("/after-%d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("write without the observer: %v", err)
		}
	}
	if l := e.Leader(); l != leader {
		t.Fatalf("the leader changed when the observer died: %s", modes(e))
	}
}

// TestReadOnlyMode leaves one voter of three: it stops serving read-write
// clients (go-zookeeper sees connection loss), answers isro "ro", and gives
// a client that asked for read-only mode a read-only session whose writes
// answer NotReadOnly.
func TestReadOnlyMode(t *testing.T) {
	e := startEnsemble(t, 3, 0, nil)
	c := dial(t, e.Addrs(), 4*time.Second)
	if _, err := c.Create("/ro", []byte("data"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	lone := e.Servers[0]
	lc := dial(t, []string{lone.Addr()}, 10*time.Second)
	if _, err := lc.Sync("/ro"); err != nil {
		t.Fatal(err)
	}
	e.Servers[1].Kill()
	e.Servers[2].Kill()
	waitFor(t, 5*time.Second, "the lone server stops serving", func() error {
		if out, _ := zkserver.FourLetterWord(lone.Addr(), "isro", time.Second); out != "ro" {
			return fmt.Errorf("isro = %q", out)
		}
		if lc.State() == zk.StateHasSession {
			return fmt.Errorf("its client still has a session")
		}
		return nil
	})
	// A client that accepts read-only mode.
	nc, err := net.DialTimeout("tcp", lone.Addr(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(nc)
	req := zkproto.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true}
	if _, err := nc.Write(zkproto.AppendFrame(nil, &req)); err != nil {
		t.Fatal(err)
	}
	frame, err := zkproto.ReadFrame(br, nil, 1<<20)
	if err != nil {
		t.Fatalf("read-only connect: %v", err)
	}
	var resp zkproto.ConnectResponse
	r := zkproto.NewReader(frame)
	resp.Decode(r)
	if r.Err() != nil || !resp.ReadOnly || resp.SessionID == 0 {
		t.Fatalf("connect response %+v (%v), want a read-only session", resp, r.Err())
	}
	call := func(xid int32, op zkproto.OpCode, rec zkproto.Record) (zkproto.ReplyHeader, *zkproto.Reader) {
		if _, err := nc.Write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: xid, Type: op}, rec)); err != nil {
			t.Fatal(err)
		}
		f, err := zkproto.ReadFrame(br, nil, 1<<20)
		if err != nil {
			t.Fatalf("reply to op %d: %v", op, err)
		}
		rd := zkproto.NewReader(f)
		var h zkproto.ReplyHeader
		h.Decode(rd)
		return h, rd
	}
	h, rd := call(1, zkproto.OpGetData, &zkproto.GetDataRequest{Path: "/ro"})
	var gd zkproto.GetDataResponse
	gd.Decode(rd)
	if h.Err != zkproto.ErrOK || string(gd.Data) != "data" {
		t.Fatalf("read-only getData: err %d data %q", h.Err, gd.Data)
	}
	h, _ = call(2, zkproto.OpSetData, &zkproto.SetDataRequest{Path: "/ro", Data: []byte("x"), Version: -1})
	if h.Err != zkproto.ErrNotReadOnly {
		t.Fatalf("setData on a read-only session: err %d, want NotReadOnly", h.Err)
	}
}
