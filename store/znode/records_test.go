package znode

import (
	"errors"
	"reflect"
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

// TestBuildRecordsRoundTrip: Records of a built tree are the records it
// was built from (in key order), and the stats clients see follow.
func TestBuildRecordsRoundTrip(t *testing.T) {
	digest := []zkproto.ACL{{Perms: zkproto.PermRead, ID: zkproto.ID{Scheme: "digest", ID: "u:h"}}}
	in := []Record{
		{Path: "/a/b", Data: []byte("b"), ACL: digest, Czxid: 5, Mzxid: 6, Pzxid: 5, Ctime: 1, Mtime: 2, Owner: 0x77, Version: 1, Aversion: 2},
		{Path: "/", Data: []byte{}, ACL: zkproto.OpenACLUnsafe, Cversion: 1, Pzxid: 3},
		{Path: "/a", ACL: zkproto.OpenACLUnsafe, Czxid: 3, Mzxid: 3, Pzxid: 5, Cversion: 4},
	}
	tree, err := Build(Options{}, 9, []Session{{ID: 0x77, Timeout: 4000}}, in)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	tree.Records(func(r Record) bool { out = append(out, r); return true })
	want := []Record{in[1], in[2], in[0]}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("records\n got %+v\nwant %+v", out, want)
	}
	if _, st, _ := tree.Get("/a"); st.Cversion != 2*4-1 || st.NumChildren != 1 {
		t.Errorf("/a stat %+v", st)
	}
	if got := tree.Ephemerals(0x77, "/"); len(got) != 1 || got[0] != "/a/b" {
		t.Errorf("ephemerals %v", got)
	}
	if s := tree.SessionList(); len(s) != 1 || s[0].Timeout != 4000 || tree.LastZxid() != 9 {
		t.Errorf("sessions %v zxid %d", s, tree.LastZxid())
	}
}

func TestBuildRefuses(t *testing.T) {
	root := Record{Path: "/", ACL: zkproto.OpenACLUnsafe}
	for name, recs := range map[string][]Record{
		"no root":   {{Path: "/a"}},
		"orphan":    {root, {Path: "/a/b"}},
		"duplicate": {root, {Path: "/a"}, {Path: "/a"}},
		"bad path":  {root, {Path: "a"}},
	} {
		if _, err := Build(Options{}, 1, nil, recs); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestBuildRecomputesQuotaStats: a tree built from records that did not
// keep their quota stats (an imported one: Apache ZooKeeper updates them
// as it replays its log, the importer does not) gets them recomputed, as
// DataTree.setupQuota does at load.
func TestBuildRecomputesQuotaStats(t *testing.T) {
	open := zkproto.OpenACLUnsafe
	in := []Record{
		{Path: "/", ACL: open}, {Path: "/zookeeper", ACL: open}, {Path: "/zookeeper/quota", ACL: open},
		{Path: "/zookeeper/quota/app", ACL: open},
		{Path: "/zookeeper/quota/app/zookeeper_limits", Data: []byte("count=10,bytes=-1"), ACL: open},
		{Path: "/zookeeper/quota/app/zookeeper_stats", Data: []byte("count=1,bytes=0"), ACL: open}, // stale
		{Path: "/app", Data: []byte("ab"), ACL: open},
		{Path: "/app/x", Data: []byte("cde"), ACL: open},
		{Path: "/other", Data: []byte("zzzz"), ACL: open},
	}
	tree, err := Build(Options{}, 9, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	data, _, zerr := tree.Get("/zookeeper/quota/app/zookeeper_stats")
	if zerr != zkproto.ErrOK || string(data) != "count=2,bytes=5" {
		t.Fatalf("stats %q (%v), want count=2,bytes=5", data, zerr)
	}
}
