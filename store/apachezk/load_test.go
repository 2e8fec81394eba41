package apachezk

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// fixture is a data directory Apache ZooKeeper 3.8 wrote in
// compat-tests/zkimport (every txn type, a kill -9 and a restart): the
// newest snapshot (8b) is empty, because the kill came while it was being
// written, and the last log (7d) was cut inside its last entry.
const fixture = "testdata/apache38"

func TestLoadApacheFixture(t *testing.T) {
	dt, info, err := LoadDir(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(info.Snapshot) != "snapshot.7b" {
		t.Errorf("snapshot %s, want snapshot.7b (8b is empty)", info.Snapshot)
	}
	if len(info.Skipped) != 1 || !strings.Contains(info.Skipped[0], "snapshot.8b at offset 0") {
		t.Errorf("skipped %q, want snapshot.8b at offset 0", info.Skipped)
	}
	if len(info.Torn) != 1 || filepath.Base(info.Torn[0]) != "log.7d" {
		t.Errorf("torn %q, want log.7d", info.Torn)
	}
	if dt.LastZxid != 0x8b || info.Txns == 0 {
		t.Errorf("last zxid 0x%x after %d txns, want 0x8b", dt.LastZxid, info.Txns)
	}
	held := dt.Nodes["/ops2/eph-held"]
	if held == nil || dt.Sessions[held.Stat.EphemeralOwner] != 30000 {
		t.Fatalf("the held ephemeral %+v and its session %v", held, dt.Sessions)
	}
	if ttl := dt.Nodes["/ops/ttl"]; ttl == nil || uint64(ttl.Stat.EphemeralOwner) != 0xff00000000000000|3600000 {
		t.Errorf("TTL node %+v", ttl)
	}
	for _, gone := range []string{"/ops/container", "/ops2/container", "/ops/gone", "/ops/eph", "/ops/never"} {
		if dt.Nodes[gone] != nil {
			t.Errorf("%s is still there", gone)
		}
	}
	if n := dt.Nodes["/ops/null"]; n == nil || n.Data != nil || n.Stat.Aversion != 1 || n.ACL[0].Perms != zkproto.PermAll&^zkproto.PermAdmin {
		t.Errorf("/ops/null %+v", n)
	}
	if acl := dt.Nodes["/ops/acl"].ACL; len(acl) != 1 || acl[0].ID.Scheme != "digest" || !strings.HasPrefix(acl[0].ID.ID, "alice:") {
		t.Errorf("/ops/acl ACL %v", acl)
	}
	// /ops: 3 sequential children, container, ttl, null, acl, gone, m1,
	// m2-, eph, eph-seq- created: the persisted cversion counts creates.
	if ops := dt.Nodes["/ops"]; ops.Stat.Cversion != 12 || ops.children != 8 || ops.Stat.Version != 1 {
		t.Errorf("/ops cversion %d children %d version %d", ops.Stat.Cversion, ops.children, ops.Stat.Version)
	}
	tree, err := dt.Tree(znode.Options{ExtendedTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	if tree.NodeCount() != len(dt.Nodes) || tree.LastZxid() != dt.LastZxid {
		t.Errorf("tree has %d nodes at 0x%x", tree.NodeCount(), tree.LastZxid())
	}
	_, st, _ := tree.Get("/ops")
	if st.Cversion != 2*12-8 {
		t.Errorf("client cversion of /ops %d, want 16", st.Cversion)
	}
}

// TestSnapshotRoundTrip writes a tree as a ZooKeeper snapshot and reads it
// back: every node and stat, and the sessions, are the same.
func TestSnapshotRoundTrip(t *testing.T) {
	dt, _, err := LoadDir(fixture)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := dt.Tree(znode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	name, err := WriteSnapshotFile(dir, tree, 0x90)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(name) != "snapshot.90" {
		t.Errorf("name %s", name)
	}
	back, info, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Snapshot != name || back.LastZxid != 0x90 {
		t.Errorf("loaded %s at 0x%x", info.Snapshot, back.LastZxid)
	}
	if !reflect.DeepEqual(back.Sessions, dt.Sessions) {
		t.Errorf("sessions %v, want %v", back.Sessions, dt.Sessions)
	}
	if len(back.Nodes) != len(dt.Nodes) {
		t.Fatalf("%d nodes, want %d", len(back.Nodes), len(dt.Nodes))
	}
	for p, n := range dt.Nodes {
		if !reflect.DeepEqual(back.Nodes[p], n) {
			t.Errorf("%q: %+v, want %+v", p, back.Nodes[p], n)
		}
	}
}

// dirWith copies the fixture files named into a new directory.
func dirWith(t *testing.T, names ...string) string {
	dir := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(fixture, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func edit(t *testing.T, path string, fn func([]byte) []byte) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBadInput: damage other than a torn last entry stops the load with
// the file and offset; nothing is returned.
func TestBadInput(t *testing.T) {
	all := []string{"snapshot.7b", "log.6a", "log.7d"}
	cases := []struct {
		name   string
		file   string
		damage func([]byte) []byte
		want   string // in the error
	}{
		{"snapshot magic", "snapshot.7b", func(b []byte) []byte { b[0] = 'X'; return b }, `snapshot.7b at offset 0: apachezk: corrupt data: magic "XKSN"`},
		{"snapshot version", "snapshot.7b", func(b []byte) []byte { b[7] = 3; return b }, "snapshot.7b at offset 4: apachezk: corrupt data: version 3"},
		{"snapshot truncated", "snapshot.7b", func(b []byte) []byte { return b[:5000] }, "snapshot.7b at offset 4999: apachezk: corrupt data: truncated"},
		{"snapshot checksum", "snapshot.7b", func(b []byte) []byte { b[3000] ^= 1; return b }, "snapshot.7b at offset "},
		{"log magic", "log.6a", func(b []byte) []byte { b[3] = 'X'; return b }, `log.6a at offset 0: apachezk: corrupt data: magic "ZKLX"`},
		{"log checksum mid-log", "log.6a", func(b []byte) []byte { b[100] ^= 0x40; return b }, "log.6a at offset "},
		{"unknown txn type", "log.6a", setFirstType(99), "log.6a at offset 16: apachezk: corrupt data: unknown txn type 99"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := dirWith(t, all...)
			edit(t, filepath.Join(dir, c.file), c.damage)
			dt, _, err := LoadDir(dir)
			if err == nil || dt != nil {
				t.Fatalf("loaded %v; want an error", dt)
			}
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q; want an *Error wrapping ErrCorrupt with %q", err, c.want)
			}
		})
	}
	t.Run("logs without a snapshot", func(t *testing.T) {
		if _, _, err := LoadDir(dirWith(t, "log.6a", "log.7d")); !errors.Is(err, errNoSnapshot) {
			t.Fatalf("error %v", err)
		}
	})
}

// setFirstType rewrites the type of a log's first txn and its checksum.
func setFirstType(typ int32) func([]byte) []byte {
	return func(b []byte) []byte {
		r := zkproto.NewReader(b[16:])
		r.Long()
		entry := r.Buffer()
		be := zkproto.AppendInt(nil, typ)
		copy(entry[8+4+8+8:], be) // clientId cxid zxid time | type
		return append(append(b[:16:16], zkproto.AppendLong(nil, int64(adler(entry)))...), b[24:]...)
	}
}

// TestTornAndFallback: a cut in the last entry of the last log, and a
// damaged newest snapshot with an older one whose logs are there, load as
// ZooKeeper loads them, to the same tree.
func TestTornAndFallback(t *testing.T) {
	want, _, err := LoadDir(fixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := dirWith(t, "snapshot.68", "snapshot.7b", "log.5a", "log.6a", "log.7d")
	edit(t, filepath.Join(dir, "snapshot.7b"), func(b []byte) []byte { b[2000] ^= 1; return b })
	got, info, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(info.Snapshot) != "snapshot.68" || len(info.Skipped) != 1 || !strings.Contains(info.Skipped[0], "snapshot.7b at offset") {
		t.Errorf("snapshot %s, skipped %q", info.Snapshot, info.Skipped)
	}
	if got.LastZxid != want.LastZxid || len(got.Nodes) != len(want.Nodes) {
		t.Fatalf("0x%x with %d nodes, want 0x%x with %d", got.LastZxid, len(got.Nodes), want.LastZxid, len(want.Nodes))
	}
	for p, n := range want.Nodes {
		if !reflect.DeepEqual(got.Nodes[p], n) {
			t.Errorf("%q: %+v, want %+v", p, got.Nodes[p], n)
		}
	}
	// log.7d already ends inside an entry; cutting it shorter gives a
	// prefix of its txns, never an error, and drops txns.
	_, full, _ := LoadDir(fixture)
	b, _ := os.ReadFile(filepath.Join(fixture, "log.7d"))
	prev := full.Txns
	for cut := len(b) - 1; cut > len(b)-200; cut-- {
		dir := dirWith(t, "snapshot.7b", "log.6a")
		os.WriteFile(filepath.Join(dir, "log.7d"), b[:cut], 0o644)
		dt, info, err := LoadDir(dir)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err) // a cut on an entry boundary is a clean end
		}
		if info.Txns > prev || (info.Txns < full.Txns && dt.LastZxid >= want.LastZxid) {
			t.Fatalf("cut at %d: %d txns to 0x%x, %d for the longer cut", cut, info.Txns, dt.LastZxid, prev)
		}
		prev = info.Txns
	}
	if prev >= full.Txns {
		t.Errorf("no cut dropped a txn")
	}
}

// TestLogWriter: a log written by LogWriter replays on its snapshot.
func TestLogWriter(t *testing.T) {
	dir := dirWith(t, "snapshot.7b", "log.6a", "log.7d")
	os.Remove(filepath.Join(dir, "log.7d"))
	l, err := CreateLog(dir, 0x7d)
	if err != nil {
		t.Fatal(err)
	}
	l.Create(0, 0x7d, 5, "/w", []byte("w"), zkproto.OpenACLUnsafe, 100)
	l.SetData(0, 0x7e, 6, "/w", []byte("w1"), 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	dt, info, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := dt.Nodes["/w"]
	if w == nil || string(w.Data) != "w1" || w.Stat.Version != 1 || dt.Nodes[""].Stat.Cversion != 100 || dt.LastZxid != 0x7e || len(info.Torn) != 0 {
		t.Errorf("/w %+v, root %+v, zxid 0x%x, torn %v", w, dt.Nodes[""], dt.LastZxid, info.Torn)
	}
}
