package quorum

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// importedZxid is an Apache ZooKeeper zxid (epoch 1, counter 0x10).
const importedZxid = 0x100000010

func importedTree(t *testing.T) *znode.Tree {
	t.Helper()
	recs := []znode.Record{
		{Path: "/", Data: []byte{}, ACL: zkproto.OpenACLUnsafe, Cversion: 3, Pzxid: 0x10000000f},
		{Path: "/zookeeper", Data: []byte{}, ACL: zkproto.OpenACLUnsafe},
		{Path: "/app", Data: []byte("v"), ACL: zkproto.OpenACLUnsafe, Czxid: 0x100000002, Mzxid: 0x100000009,
			Pzxid: 0x10000000f, Ctime: 1000, Mtime: 2000, Version: 4, Cversion: 7},
		{Path: "/app/eph", ACL: zkproto.OpenACLUnsafe, Czxid: 0x10000000f, Mzxid: 0x10000000f, Pzxid: 0x10000000f, Owner: 0x4242},
	}
	tree, err := znode.Build(znode.Options{}, importedZxid, []znode.Session{{ID: 0x4242, Timeout: 30000}}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// TestImportTreeZxidsGrow: a server started on an imported tree keeps its
// stats and sessions and gives new writes zxids above the imported ones;
// ExportTree reads it all back from the stopped server's files.
func TestImportTreeZxidsGrow(t *testing.T) {
	cfg := DefaultConfig(t.TempDir())
	cfg.TickTime = 200 * time.Millisecond
	cfg.MaxSessionTimeout = 40 * time.Second
	if err := ImportTree(cfg, importedTree(t)); err != nil {
		t.Fatal(err)
	}
	if err := ImportTree(cfg, importedTree(t)); !errors.Is(err, raftnode.ErrNotEmpty) {
		t.Fatalf("a second import: %v, want ErrNotEmpty", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := StartWithListener(cfg, slog.New(slog.DiscardHandler), l)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, _ := failstopClient(t, s.Addr().String())
	_, st, err := c.Get("/app")
	if err != nil || st.Version != 4 || st.Cversion != 2*7-1 || st.Mzxid != 0x100000009 || st.Ctime != 1000 {
		t.Fatalf("/app: %+v, %v", st, err)
	}
	_, st, err = c.Get("/app/eph")
	if err != nil || st.EphemeralOwner != 0x4242 {
		t.Fatalf("/app/eph: %+v, %v", st, err)
	}
	if _, err := c.Create("/app/new", nil, zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	kids, _, _ := c.Children("/app")
	_, st, err = c.Get("/app/new0000000007")
	if err != nil || st.Czxid <= importedZxid {
		t.Fatalf("the new node (children %v): %+v, %v; want a zxid above 0x%x", kids, st, err, importedZxid)
	}
	newZxid := st.Czxid
	c.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tree, zxid, err := ExportTree(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if zxid < newZxid {
		t.Errorf("export at 0x%x, before the write at 0x%x", zxid, newZxid)
	}
	if _, st, e := tree.Get("/app/new0000000007"); e != zkproto.ErrOK || st.Czxid != newZxid {
		t.Errorf("exported tree: %+v, %v", st, e)
	}
	if _, ok := tree.Sessions()[0x4242]; !ok {
		t.Errorf("the imported session is gone from the export: %v", tree.Sessions())
	}
}

// TestImportTreeEnsemble: two members of three import the tree, the third
// starts empty and receives it from the leader as a raft snapshot; every
// member serves the imported stats and new writes get larger zxids.
func TestImportTreeEnsemble(t *testing.T) {
	specs := make([]ServerSpec, 3)
	for i := range specs {
		specs[i] = ServerSpec{ID: uint64(i + 1), Host: "127.0.0.1", PeerPort: inprocFreePort(t)}
	}
	ens := &inprocEnsemble{stopped: make([]bool, 3)}
	root := t.TempDir()
	for i := range specs {
		cfg := DefaultConfig(filepath.Join(root, fmt.Sprint(i+1)))
		cfg.TickTime = 200 * time.Millisecond
		cfg.MaxSessionTimeout = 40 * time.Second
		cfg.MyID = uint64(i + 1)
		cfg.Servers = specs
		if i < 2 {
			if err := ImportTree(cfg, importedTree(t)); err != nil {
				t.Fatal(err)
			}
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		rl := &reapLog{}
		s, err := start(cfg, slog.New(rl), l, startOptions{})
		if err != nil {
			l.Close()
			t.Fatalf("server %d: %v", i+1, err)
		}
		t.Cleanup(func() { s.Close() })
		ens.servers = append(ens.servers, s)
		ens.logs = append(ens.logs, rl)
	}
	ens.waitLeader(t)
	for i, s := range ens.servers {
		failstopCheckFor(t, 30*time.Second, fmt.Sprintf("server %d serves /app", i+1), func() bool {
			_, st, err := s.tree.Load().Get("/app")
			return err == zkproto.ErrOK && st.Version == 4 && st.Mzxid == 0x100000009
		})
	}
	c, _ := failstopClient(t, ens.servers[2].Addr().String())
	if _, err := c.Create("/app/x", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, st, err := c.Get("/app/x")
	if err != nil || st.Czxid <= importedZxid {
		t.Fatalf("a write after the import: %+v, %v", st, err)
	}
}
