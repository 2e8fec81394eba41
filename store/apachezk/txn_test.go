package apachezk

import (
	"strings"
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

// entry builds a log entry: TxnHeader (session 7, zxid, time zxid*10),
// the body, and optionally a TxnDigest.
func entry(zxid int64, typ zkproto.OpCode, digest bool, body ...[]byte) []byte {
	b := zkproto.AppendLong(nil, 7)
	b = zkproto.AppendInt(b, 1)
	b = zkproto.AppendLong(b, zxid)
	b = zkproto.AppendLong(b, zxid*10)
	b = zkproto.AppendInt(b, int32(typ))
	for _, p := range body {
		b = append(b, p...)
	}
	if digest {
		b = zkproto.AppendLong(zkproto.AppendInt(b, 2), 12345)
	}
	return b
}

func str(s string) []byte          { return zkproto.AppendString(nil, s) }
func i32(v int32) []byte           { return zkproto.AppendInt(nil, v) }
func i64(v int64) []byte           { return zkproto.AppendLong(nil, v) }
func acls(a ...zkproto.ACL) []byte { return zkproto.AppendACLs(nil, a) }
func buf(b []byte) []byte          { return zkproto.AppendBuffer(nil, b) }
func boolean(v bool) []byte        { return zkproto.AppendBool(nil, v) }
func sub(typ zkproto.OpCode, body ...[]byte) []byte {
	var b []byte
	for _, p := range body {
		b = append(b, p...)
	}
	return append(i32(int32(typ)), buf(b)...)
}

var open = acls(zkproto.OpenACLUnsafe...)

// TestReplayEveryType replays one entry of every type 3.8 writes, with and
// without the TxnDigest trailer, on ZooKeeper's empty tree.
func TestReplayEveryType(t *testing.T) {
	for _, digest := range []bool{false, true} {
		dt := emptyTree()
		ents := [][]byte{
			entry(1, zkproto.OpCreateSession, digest, i32(30000)),
			entry(2, zkproto.OpCreate, digest, str("/a"), buf([]byte("a")), open, boolean(false), i32(1)),
			entry(3, zkproto.OpCreate2, digest, str("/a/e"), buf(nil), open, boolean(true), i32(1)),
			entry(4, zkproto.OpCreateContainer, digest, str("/c"), buf(nil), open, i32(2)),
			entry(5, zkproto.OpCreateTTL, digest, str("/t"), buf(nil), open, i32(3), i64(5000)),
			entry(6, zkproto.OpSetData, digest, str("/a"), buf([]byte("a1")), i32(1)),
			entry(7, zkproto.OpSetACL, digest, str("/a"), acls(zkproto.ReadACLUnsafe...), i32(1)),
			entry(8, zkproto.OpReconfig, digest, str("/zookeeper/config"), buf([]byte("server.1=x")), i32(-1)),
			entry(9, zkproto.OpDeleteContainer, digest, str("/c")),
			entry(10, zkproto.OpMulti, digest, i32(3),
				sub(zkproto.OpCheck, str("/a"), i32(1)),
				sub(zkproto.OpCreate, str("/m"), buf(nil), open, boolean(false), i32(4)),
				sub(zkproto.OpSetData, str("/m"), buf([]byte("m")), i32(1))),
			entry(11, zkproto.OpMulti, digest, i32(2), // a failed multi
				sub(zkproto.OpError, i32(0)),
				sub(zkproto.OpError, i32(int32(zkproto.ErrBadVersion)))),
			entry(12, zkproto.OpError, digest, i32(int32(zkproto.ErrNoNode))),
			entry(13, zkproto.OpDelete, digest, str("/t")),
			entry(14, zkproto.OpCloseSession, digest, i32(1), str("/a/e")),
		}
		for _, e := range ents {
			tx, err := decodeEntry(e)
			if err != nil {
				t.Fatalf("digest %v: entry %x: %v", digest, e[12:20], err)
			}
			dt.apply(tx)
		}
		if dt.LastZxid != 14 || len(dt.Sessions) != 0 {
			t.Errorf("zxid %d sessions %v", dt.LastZxid, dt.Sessions)
		}
		a := dt.Nodes["/a"]
		if string(a.Data) != "a1" || a.Stat.Version != 1 || a.Stat.Aversion != 1 || a.ACL[0].Perms != zkproto.PermRead ||
			a.Stat.Cversion != 1 || a.Stat.Pzxid != 14 || a.children != 0 || a.Stat.Mtime != 60 || a.Stat.Ctime != 20 {
			t.Errorf("digest %v: /a %+v", digest, a)
		}
		m := dt.Nodes["/m"]
		if m == nil || string(m.Data) != "m" || m.Stat.Czxid != 10 {
			t.Errorf("/m %+v", m)
		}
		for _, gone := range []string{"/c", "/t", "/a/e"} {
			if dt.Nodes[gone] != nil {
				t.Errorf("%s is there", gone)
			}
		}
		if string(dt.Nodes["/zookeeper/config"].Data) != "server.1=x" {
			t.Errorf("reconfig not applied")
		}
		if root := dt.Nodes[""]; root.Stat.Cversion != 4 || root.children != 3 {
			t.Errorf("root %+v", root)
		}
	}
}

// TestReplayOlderFormats: CreateTxnV0 (no parentCVersion) and a
// closeSession without CloseSessionTxn delete the session's ephemerals
// from the tree's own list, as ZooKeeper does.
func TestReplayOlderFormats(t *testing.T) {
	dt := emptyTree()
	for _, e := range [][]byte{
		entry(1, zkproto.OpCreateSession, false, i32(4000)),
		entry(2, zkproto.OpCreate, false, str("/e"), buf(nil), open, boolean(true)),
		entry(3, zkproto.OpCloseSession, false),
	} {
		tx, err := decodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		dt.apply(tx)
	}
	if dt.Nodes["/e"] != nil || dt.Nodes[""].Stat.Cversion != 1 || dt.Nodes[""].Stat.Pzxid != 3 {
		t.Errorf("root %+v, /e %v", dt.Nodes[""], dt.Nodes["/e"])
	}
}

// TestReplayFuzzy: a snapshot taken while txns ran holds some of their
// effects; replaying them again changes nothing wrong (DataTree.processTxn's
// NodeExists and NoNode cases).
func TestReplayFuzzy(t *testing.T) {
	dt := emptyTree()
	create := entry(2, zkproto.OpCreate, false, str("/x"), buf(nil), open, boolean(false), i32(1))
	for i := 0; i < 2; i++ {
		tx, _ := decodeEntry(create)
		dt.apply(tx)
	}
	tx, _ := decodeEntry(entry(3, zkproto.OpDelete, false, str("/nothere")))
	dt.apply(tx)
	root := dt.Nodes[""]
	if root.children != 2 || root.Stat.Cversion != 1 || root.Stat.Pzxid != 3 {
		t.Errorf("root %+v", root)
	}
}

func TestDecodeBad(t *testing.T) {
	cases := map[string][]byte{
		"unknown type":        entry(1, 77, false),
		"unknown in a multi":  entry(1, zkproto.OpMulti, false, i32(1), sub(zkproto.OpSetACL, str("/a"), open, i32(0))),
		"short header":        entry(1, zkproto.OpCreate, false)[:20],
		"short body":          entry(1, zkproto.OpSetData, false, str("/a")),
		"bytes left over":     entry(1, zkproto.OpDelete, false, str("/a"), i32(1)),
		"bad vector in multi": entry(1, zkproto.OpMulti, false, i32(1000)),
	}
	for name, e := range cases {
		if _, err := decodeEntry(e); err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
