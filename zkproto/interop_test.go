package zkproto

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// fakeServer is a minimal single-connection ZooKeeper built on zkproto, just
// enough for go-zookeeper/zk to exercise the codec over a real socket.
type fakeServer struct {
	t         *testing.T
	nodes     map[string]*fakeNode
	watches   map[string]bool // data watches
	zxid      int64
	connectRq chan ConnectRequest
}

type fakeNode struct {
	data []byte
	stat Stat
}

func (s *fakeServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	body, err := ReadFrame(br, nil, MaxBuffer)
	if err != nil {
		return
	}
	var creq ConnectRequest
	r := NewReader(body)
	creq.Decode(r)
	if r.Err() != nil {
		s.t.Errorf("connect request: %v", r.Err())
		return
	}
	s.connectRq <- creq
	out := AppendFrame(nil, &ConnectResponse{TimeOut: creq.TimeOut, SessionID: 0x77, Passwd: make([]byte, 16), HasReadOnly: creq.HasReadOnly})
	var buf []byte
	for {
		if _, err := c.Write(out); err != nil {
			return
		}
		out = out[:0]
		if buf, err = ReadFrame(br, buf, MaxBuffer); err != nil {
			return
		}
		var h RequestHeader
		r := NewReader(buf)
		h.Decode(r)
		rec, err := DecodeRequest(h.Type, r.Src)
		if err != nil {
			out = AppendReply(out, ReplyHeader{Xid: h.Xid, Zxid: s.zxid, Err: ErrUnimplemented}, nil)
			c.Write(out)
			return
		}
		out = s.handle(out, h, rec)
		if h.Type == OpCloseSession {
			c.Write(out)
			return
		}
	}
}

func (s *fakeServer) handle(out []byte, h RequestHeader, rec Record) []byte {
	reply := func(err Err, rsp Record) []byte {
		return AppendReply(out, ReplyHeader{Xid: h.Xid, Zxid: s.zxid, Err: err}, rsp)
	}
	switch req := rec.(type) {
	case *Empty:
		return reply(ErrOK, nil)
	case *CreateRequest:
		// req.Data aliases the frame buffer, which the next ReadFrame reuses:
		// s.create and s.setData copy it.
		if err := s.create(req); err != ErrOK {
			return reply(err, nil)
		}
		return reply(ErrOK, &CreateResponse{Path: req.Path})
	case *GetDataRequest:
		n, ok := s.nodes[req.Path]
		if !ok {
			return reply(ErrNoNode, nil)
		}
		if req.Watch {
			s.watches[req.Path] = true
		}
		return reply(ErrOK, &GetDataResponse{Data: n.data, Stat: n.stat})
	case *SetDataRequest:
		st, err := s.setData(req)
		if err != ErrOK {
			return reply(err, nil)
		}
		if s.watches[req.Path] {
			delete(s.watches, req.Path)
			out = AppendNotification(out, WatcherEvent{Type: EventNodeDataChanged, State: StateSyncConnected, Path: req.Path})
		}
		return reply(ErrOK, &SetDataResponse{Stat: st})
	case *ExistsRequest:
		n, ok := s.nodes[req.Path]
		if !ok {
			return reply(ErrNoNode, nil)
		}
		return reply(ErrOK, &ExistsResponse{Stat: n.stat})
	case *GetChildrenRequest:
		var kids []string
		for p := range s.nodes {
			if p != "/" && strings.HasPrefix(p, req.Path) && !strings.Contains(p[len(req.Path):], "/") {
				kids = append(kids, p[len(req.Path):])
			}
		}
		slices.Sort(kids)
		return reply(ErrOK, &GetChildren2Response{Children: kids, Stat: s.nodes[req.Path].stat})
	case *GetACLRequest:
		return reply(ErrOK, &GetACLResponse{ACL: OpenACLUnsafe, Stat: s.nodes[req.Path].stat})
	case *DeleteRequest:
		delete(s.nodes, req.Path)
		return reply(ErrOK, nil)
	case *SyncRequest:
		return reply(ErrOK, &SyncResponse{Path: req.Path})
	case *MultiRequest:
		return reply(ErrOK, s.multi(req))
	}
	return reply(ErrUnimplemented, nil)
}

func (s *fakeServer) create(req *CreateRequest) Err {
	if _, ok := s.nodes[req.Path]; ok {
		return ErrNodeExists
	}
	s.zxid++
	s.nodes[req.Path] = &fakeNode{data: bytes.Clone(req.Data), stat: Stat{Czxid: s.zxid, Mzxid: s.zxid, DataLength: int32(len(req.Data))}}
	return ErrOK
}

func (s *fakeServer) setData(req *SetDataRequest) (Stat, Err) {
	n, ok := s.nodes[req.Path]
	if !ok {
		return Stat{}, ErrNoNode
	}
	if req.Version != -1 && req.Version != n.stat.Version {
		return Stat{}, ErrBadVersion
	}
	s.zxid++
	n.data, n.stat.Version, n.stat.Mzxid, n.stat.DataLength = bytes.Clone(req.Data), n.stat.Version+1, s.zxid, int32(len(req.Data))
	return n.stat, ErrOK
}

// multi applies creates and setDatas; on the first failure it answers the
// way ZooKeeper does (all OpError) without undoing anything (test only).
func (s *fakeServer) multi(req *MultiRequest) *MultiResponse {
	var rsp MultiResponse
	for i, op := range req.Ops {
		res := MultiResult{Type: op.Type}
		err := ErrUnimplemented
		switch o := op.Op.(type) {
		case *CreateRequest:
			err, res.Path = s.create(o), o.Path
		case *SetDataRequest:
			res.Stat, err = s.setData(o)
		}
		if err != ErrOK {
			fail := make([]MultiResult, len(req.Ops))
			for j := range fail {
				fail[j] = MultiResult{Type: OpError, Err: map[bool]Err{true: ErrOK, false: ErrRuntimeInconsistency}[j < i]}
			}
			fail[i].Err = err
			return &MultiResponse{Results: fail}
		}
		rsp.Results = append(rsp.Results, res)
	}
	return &rsp
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// TestGoZookeeperClient drives the codec with go-zookeeper/zk v1.0.4, whose
// encoder and decoder are independent of ours.
func TestGoZookeeperClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv := &fakeServer{t: t, nodes: map[string]*fakeNode{"/": {}}, watches: map[string]bool{}, connectRq: make(chan ConnectRequest, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err == nil {
			srv.serve(c)
		}
	}()

	conn, _, err := zk.Connect([]string{ln.Addr().String()}, 10*time.Second, zk.WithLogger(nopLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	creq := <-srv.connectRq
	if creq.HasReadOnly || len(creq.Passwd) != 16 || creq.TimeOut != 10000 {
		t.Errorf("connect request from go-zookeeper: %+v (want 44 bytes, no readOnly)", creq)
	}

	if p, err := conn.Create("/a", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil || p != "/a" {
		t.Fatalf("create: %q %v", p, err)
	}
	if _, err := conn.Create("/a", nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("create again: %v", err)
	}
	data, st, ev, err := conn.GetW("/a")
	if err != nil || string(data) != "x" || st.DataLength != 1 {
		t.Fatalf("getW: %q %+v %v", data, st, err)
	}
	if st, err := conn.Set("/a", []byte("yy"), 0); err != nil || st.Version != 1 {
		t.Fatalf("set: %+v %v", st, err)
	}
	select {
	case e := <-ev:
		if e.Type != zk.EventNodeDataChanged || e.Path != "/a" {
			t.Fatalf("event %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
	if ok, _, err := conn.Exists("/missing"); ok || err != nil {
		t.Fatalf("exists /missing: %v %v", ok, err)
	}
	res, err := conn.Multi(&zk.CreateRequest{Path: "/b", Data: []byte("b"), Acl: zk.WorldACL(zk.PermAll)},
		&zk.SetDataRequest{Path: "/a", Data: []byte("z"), Version: 1})
	if err != nil || len(res) != 2 || res[0].String != "/b" || res[1].Stat == nil || res[1].Stat.Version != 2 {
		t.Fatalf("multi: %+v %v", res, err)
	}
	res, err = conn.Multi(&zk.CreateRequest{Path: "/c", Acl: zk.WorldACL(zk.PermAll)},
		&zk.CreateRequest{Path: "/a", Acl: zk.WorldACL(zk.PermAll)},
		&zk.SetDataRequest{Path: "/a", Version: -1})
	if !errors.Is(err, zk.ErrNodeExists) || len(res) != 3 || res[0].Error != nil ||
		!errors.Is(res[1].Error, zk.ErrNodeExists) || res[2].Error == nil {
		t.Fatalf("failed multi: %+v %v", res, err)
	}
	if kids, _, err := conn.Children("/"); err != nil || !slices.Equal(kids, []string{"a", "b", "c"}) {
		t.Fatalf("children: %v %v", kids, err)
	}
	if acl, _, err := conn.GetACL("/a"); err != nil || len(acl) != 1 || acl[0].Scheme != "world" || acl[0].Perms != zk.PermAll {
		t.Fatalf("getACL: %+v %v", acl, err)
	}
	if p, err := conn.Sync("/a"); err != nil || p != "/a" {
		t.Fatalf("sync: %q %v", p, err)
	}
	if err := conn.Delete("/b", -1); err != nil {
		t.Fatalf("delete: %v", err)
	}
	conn.Close()
	<-done
}
