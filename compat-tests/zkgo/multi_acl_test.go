package zkgo

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/zkproto"
)

func TestMultiIsAtomic(t *testing.T) {
	ts := startServer(t)
	c, _ := ts.connect(5 * time.Second)
	must[string](t)(c.Create("/m", []byte("v"), 0, openACL))
	res, err := c.Multi(
		&zk.CreateRequest{Path: "/m/a", Acl: openACL},
		&zk.SetDataRequest{Path: "/m", Data: []byte("w"), Version: 7},
		&zk.CreateRequest{Path: "/m/b", Acl: openACL},
	)
	if err == nil || len(res) != 3 {
		t.Fatalf("failing multi: %v %v", res, err)
	}
	// go-zookeeper has no name for RuntimeInconsistency (-2), which
	// ZooKeeper reports for the ops after the failing one.
	if res[0].Error != nil || !errors.Is(res[1].Error, zk.ErrBadVersion) || res[2].Error == nil || res[2].Error.Error() != "unknown error: -2" {
		t.Fatalf("per-op results: %v %v %v", res[0].Error, res[1].Error, res[2].Error)
	}
	if ok, _, _ := c.Exists("/m/a"); ok {
		t.Fatal("an op of a failed multi was applied")
	}
	res, err = c.Multi(
		&zk.CreateRequest{Path: "/m/a", Acl: openACL},
		&zk.CheckVersionRequest{Path: "/m", Version: 0},
		&zk.SetDataRequest{Path: "/m", Data: []byte("w"), Version: 0},
		&zk.DeleteRequest{Path: "/m/a", Version: 0},
	)
	if err != nil {
		t.Fatalf("multi: %v", err)
	}
	if res[0].String != "/m/a" || res[2].Stat == nil || res[2].Stat.Version != 1 {
		t.Fatalf("multi results: %+v", res)
	}
	_, st, _ := c.Get("/m")
	if st.Mzxid != res[2].Stat.Mzxid || st.Pzxid != st.Mzxid {
		t.Fatalf("all ops of a multi share one zxid: %+v", st)
	}
}

func TestDigestACL(t *testing.T) {
	ts := startServer(t)
	owner, _ := ts.connect(5 * time.Second)
	if err := owner.AddAuth("digest", []byte("alice:secret")); err != nil {
		t.Fatal(err)
	}
	must[string](t)(owner.Create("/private", []byte("s"), 0, zk.DigestACL(zk.PermAll, "alice", "secret")))
	must[string](t)(owner.Create("/mine", []byte("m"), 0, zk.AuthACL(zk.PermAll)))

	stranger, _ := ts.connect(5 * time.Second)
	if _, _, err := stranger.Get("/private"); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("get without auth: %v", err)
	}
	if _, err := stranger.Set("/mine", nil, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("set without auth: %v", err)
	}
	if _, _, err := stranger.Exists("/private"); err != nil {
		t.Fatalf("exists needs no permission: %v", err)
	}
	if err := stranger.AddAuth("digest", []byte("alice:wrong")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := stranger.Get("/private"); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("get with a wrong password: %v", err)
	}
	friend, _ := ts.connect(5 * time.Second)
	if err := friend.AddAuth("digest", []byte("alice:secret")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := friend.Get("/private"); err != nil || string(data) != "s" {
		t.Fatalf("get with auth: %q %v", data, err)
	}
	acl, _, err := friend.GetACL("/mine")
	if err != nil || len(acl) != 1 || acl[0].Scheme != "digest" || acl[0].ID != zk.DigestACL(zk.PermAll, "alice", "secret")[0].ID {
		t.Fatalf("auth ACL expands to the session's digest identity: %+v %v", acl, err)
	}
	if _, err := stranger.Create("/open", nil, 0, zk.AuthACL(zk.PermAll)); err != nil {
		t.Fatalf("auth ACL with a (wrong) digest identity: %v", err)
	}
	nobody, _ := ts.connect(5 * time.Second)
	if _, err := nobody.Create("/x", nil, 0, zk.AuthACL(zk.PermAll)); !errors.Is(err, zk.ErrInvalidACL) {
		t.Fatalf("auth ACL without identities: %v", err)
	}
}

func TestUnknownAuthSchemeClosesConnection(t *testing.T) {
	ts := startServer(t)
	rc := dialRaw(t, ts.addr, zkproto.ConnectRequest{})
	rc.write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: zkproto.XidAuth, Type: zkproto.OpAuth},
		&zkproto.AuthPacket{Scheme: "kerberos-ish", Auth: []byte("x")}))
	frame, err := rc.readFrame()
	if err != nil {
		t.Fatal(err)
	}
	r := zkproto.NewReader(frame)
	var h zkproto.ReplyHeader
	h.Decode(r)
	if h.Err != zkproto.ErrAuthFailed || !rc.closed() {
		t.Fatalf("unknown scheme: %v, want AuthFailed and a close", h.Err)
	}
}

func TestWhoAmIAndMultiRead(t *testing.T) {
	ts := startServer(t)
	rc := dialRaw(t, ts.addr, zkproto.ConnectRequest{})
	rc.call(zkproto.OpAuth, &zkproto.AuthPacket{Scheme: "digest", Auth: []byte("bob:pw")})
	h, r, _ := rc.call(zkproto.OpWhoAmI, nil)
	var who zkproto.WhoAmIResponse
	who.Decode(r)
	found := map[string]string{}
	for _, ci := range who.ClientInfo {
		found[ci.AuthScheme] = ci.User
	}
	if h.Err != zkproto.ErrOK || found["digest"] != "bob" || found["ip"] != "127.0.0.1" {
		t.Fatalf("whoAmI: %v %+v", h.Err, who)
	}
	rc.call(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/mr", Data: []byte("d"), ACL: zkproto.OpenACLUnsafe})
	h, r, _ = rc.call(zkproto.OpMultiRead, &zkproto.MultiRequest{Ops: []zkproto.MultiOp{
		{Type: zkproto.OpGetData, Op: &zkproto.GetDataRequest{Path: "/mr"}},
		{Type: zkproto.OpGetData, Op: &zkproto.GetDataRequest{Path: "/none"}},
		{Type: zkproto.OpGetChildren, Op: &zkproto.GetChildrenRequest{Path: "/"}},
	}})
	var mr zkproto.MultiResponse
	mr.Decode(r)
	if h.Err != zkproto.ErrOK || len(mr.Results) != 3 || string(mr.Results[0].Data) != "d" ||
		mr.Results[1].Err != zkproto.ErrNoNode || len(mr.Results[2].Children) != 2 {
		t.Fatalf("multiRead: %v %+v", h.Err, mr)
	}
}
