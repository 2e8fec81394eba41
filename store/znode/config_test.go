package znode

import (
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

// TestSetConfig: a reconfig's txn writes /zookeeper/config as ZooKeeper's
// SetDataTxn(-1) does, with the version line of the txn's zxid.
func TestSetConfig(t *testing.T) {
	h := newHarness(t, Options{})
	h.tree.SetConfigNode([]byte("server.1=a:1:2:participant;0.0.0.0:3\nversion=0"), 5)
	if h.tree.ConfigChanged() {
		t.Fatal("changed before any reconfig")
	}
	h.zxid = 0x10000001a - 1
	r := h.must(Op{Type: OpSetConfig, Data: []byte("server.1=a:1:2:participant;0.0.0.0:3\nserver.2=b:1:2:observer;0.0.0.0:3\n")})
	data, st, _ := h.tree.Get("/zookeeper/config")
	if string(data) != "server.1=a:1:2:participant;0.0.0.0:3\nserver.2=b:1:2:observer;0.0.0.0:3\nversion=10000001a" {
		t.Fatalf("config %q", data)
	}
	if st.Version != -1 || st.Mzxid != 0x10000001a || r.Stat != st || !h.tree.ConfigChanged() {
		t.Fatalf("stat %+v result %+v", st, r.Stat)
	}
	if acl, _, _ := h.tree.ACL("/zookeeper/config"); len(acl) != 1 || acl[0].Perms != zkproto.PermRead {
		t.Fatalf("acl %v", acl)
	}
}
