package broker

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/kproto"
)

// testBatch builds an uncompressed record batch with one record of size n.
func testBatch(n int) []byte {
	var r []byte
	r = append(r, 0)
	r = binary.AppendVarint(r, 0)
	r = binary.AppendVarint(r, 0)
	r = binary.AppendVarint(r, -1)
	r = binary.AppendVarint(r, int64(n))
	r = append(r, make([]byte, n)...)
	r = binary.AppendVarint(r, 0)
	recs := binary.AppendVarint(nil, int64(len(r)))
	recs = append(recs, r...)
	b := make([]byte, 61, 61+len(recs))
	binary.BigEndian.PutUint32(b[8:], uint32(49+len(recs)))
	b[16] = 2
	binary.BigEndian.PutUint64(b[43:], ^uint64(0)) // producer id -1
	binary.BigEndian.PutUint16(b[51:], 0xffff)
	binary.BigEndian.PutUint32(b[53:], 0xffffffff)
	binary.BigEndian.PutUint32(b[57:], 1)
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// newTestBroker is a broker without ZooKeeper holding one topic "t" with
// one local partition.
func newTestBroker(t testing.TB) (*Broker, *partition) {
	dir := t.TempDir()
	cfg := DefaultConfig(dir)
	b := &Broker{cfg: cfg, log: slog.New(slog.DiscardHandler), now: time.Now, done: make(chan struct{})}
	b.mu.conns = map[*conn]struct{}{}
	b.cluster.init()
	tc := effectiveConfig(&cfg, nil)
	id := zkmeta.NewUUID()
	part, err := openReplica(partitionDir(dir, "t", 0), "t", 0, id, 0, tc, b.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { part.close() })
	if err := part.applyState(partState{leader: 0, isr: []int32{0}, replicas: []int32{0}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	tp := &topic{name: "t", id: id, replicas: [][]int32{{0}}, leaders: []int32{0}, leaderEpochs: []int32{0},
		isr: [][]int32{{0}}, zkVersions: []int32{0}, cfg: tc, parts: []*partition{part}, local: []*partition{part}}
	b.cluster.topics["t"], b.cluster.byID[tp.id] = tp, tp
	return b, part
}

// fetchOver serves one Fetch of topic t on server and returns the
// record bytes the client received.
func fetchOver(t *testing.T, b *Broker, server, client net.Conn) int {
	return fetchOverConn(t, b, server, client, func(*conn) {})
}

// fetchOverConn is fetchOver with setup applied to the server's conn.
func fetchOverConn(t *testing.T, b *Broker, server, client net.Conn, setup func(*conn)) int {
	c := newConn(b, server)
	setup(c)
	done := make(chan struct{})
	go func() { c.writeLoop(); close(done) }()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes = 12, -1, 50<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 50 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	hdr := kproto.RequestHeader{APIKey: 1, APIVersion: 12, CorrelationID: 7}
	resp, err := handleFetch(c, &hdr, req.AppendTo(nil))
	if err != nil {
		t.Fatal(err)
	}
	c.out <- resp
	close(c.out)
	br := bufio.NewReader(client)
	var size [4]byte
	if _, err := io.ReadFull(br, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(br, body); err != nil {
		t.Fatal(err)
	}
	<-done
	fr := kmsg.NewPtrFetchResponse()
	fr.Version = 12
	if err := fr.ReadFrom(body[5:]); err != nil {
		t.Fatal(err)
	}
	return len(fr.Topics[0].Partitions[0].RecordBatches)
}

// TestFetchUsesSendfile checks that on a TCP socket no record byte is
// copied through user space, and that the counter does see copies on a
// connection without a file descriptor (net.Pipe).
func TestFetchUsesSendfile(t *testing.T) {
	b, part := newTestBroker(t)
	var want int
	for i := 0; i < 64; i++ {
		batch := testBatch(16 << 10)
		want += len(batch)
		if res := part.appendBatch(batch, time.Now()); res.code != 0 {
			t.Fatal(res.code)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if got := fetchOver(t, b, server, client); got != want {
		t.Fatalf("received %d record bytes, want %d", got, want)
	}
	if n := b.copiedRecordBytes.Load(); n != 0 {
		t.Fatalf("%d record bytes were copied through user space on a TCP socket", n)
	}
	ps, pc := net.Pipe()
	if got := fetchOver(t, b, ps, pc); got != want {
		t.Fatalf("pipe: received %d record bytes, want %d", got, want)
	}
	if n := b.copiedRecordBytes.Load(); n != int64(want) {
		t.Fatalf("pipe: counter saw %d copied bytes, want %d", n, want)
	}
}

func TestRegistryPanicsOnDuplicateKey(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("registering a key twice did not panic")
		}
	}()
	regKey(kproto.KeyProduce, 0, 9, handleProduce)
}

func TestAdvertisedVersions(t *testing.T) {
	want := map[int16][2]int16{0: {0, 10}, 1: {0, 13}, 2: {0, 7}, 3: {0, 12}, 10: {0, 4}, 18: {0, 3},
		19: {0, 7}, 20: {0, 6}, 22: {0, 4}, 23: {0, 4}, 32: {0, 4}, 37: {0, 3}, 60: {0, 1},
		8: {0, 8}, 9: {0, 8}, 11: {0, 9}, 12: {0, 4}, 13: {0, 5}, 14: {0, 5}, 15: {0, 5}, 16: {0, 5},
		42: {0, 2}, 47: {0, 0}, 33: {0, 2}, 44: {0, 1},
		4: {7, 7}, 5: {4, 4}, 6: {8, 8}, 7: {3, 3},
		17: {0, 1}, 36: {0, 2}, 50: {0, 0}, 51: {0, 0}, // SASL, SCRAM credentials
		29: {0, 3}, 30: {0, 3}, 31: {0, 3}, // ACLs
		56: {0, 3},                                     // AlterPartition
		21: {0, 2}, 35: {0, 4}, 61: {0, 0}, 75: {0, 0}, // DeleteRecords, DescribeLogDirs, DescribeProducers, DescribeTopicPartitions
		43: {0, 2}, 45: {0, 0}, 46: {0, 0}, // ElectLeaders, partition reassignments
		24: {0, 5}, 25: {0, 3}, 26: {0, 3}, 27: {0, 1}, 28: {0, 3}, 65: {0, 0}, 66: {0, 1}, // transactions
		48: {0, 1}, 49: {0, 1}, // client quotas
	}
	got := advertisedVersions()
	if len(got) != len(want) {
		t.Fatalf("advertised %v", got)
	}
	for _, r := range got {
		if w := want[r.APIKey]; r.MinVersion != w[0] || r.MaxVersion != w[1] {
			t.Errorf("key %d: %d-%d, want %v", r.APIKey, r.MinVersion, r.MaxVersion, w)
		}
		if r.MaxVersion > kmsg.RequestForKey(r.APIKey).MaxVersion() {
			t.Errorf("key %d advertised beyond what kmsg knows", r.APIKey)
		}
	}
}

func TestParseProperties(t *testing.T) {
	props := `# a standard server.properties
broker.id=3
listeners=PLAINTEXT://0.0.0.0:9093
advertised.listeners=PLAINTEXT://kafka.example:9093
log.dirs=/data/a,/data/b
zookeeper.connect=zk1:2181,zk2:2181/kafka
num.partitions=4
log.retention.hours=24
log.retention.ms=1000
log.segment.bytes=1048576
auto.create.topics.enable=false
num.network.threads=3
some.unknown.key=1
`
	var logs strings.Builder
	cfg, err := ParseProperties(strings.NewReader(props), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BrokerID != 3 || cfg.ListenAddr() != "0.0.0.0:9093" || len(cfg.LogDirs) != 2 ||
		cfg.ZooKeeperConnect != "zk1:2181,zk2:2181/kafka" || cfg.NumPartitions != 4 ||
		cfg.LogRetention != time.Second || cfg.LogSegmentBytes != 1<<20 || cfg.AutoCreateTopics ||
		cfg.MessageMaxBytes != 1048588 || cfg.SocketRequestMaxBytes != 100<<20 {
		t.Fatalf("parsed %+v", cfg)
	}
	if !strings.Contains(logs.String(), "some.unknown.key") || strings.Contains(logs.String(), "num.network.threads") {
		t.Fatalf("warnings: %s", logs.String())
	}
	if _, err := ParseProperties(strings.NewReader("listeners=SSL://x:1\n"), nil); err == nil {
		t.Fatal("SSL listener accepted")
	}
}

func TestTopicNameValidation(t *testing.T) {
	for name, ok := range map[string]bool{"a": true, "a.b-c_D9": true, "": false, ".": false, "..": false,
		"a b": false, "a/b": false, "ä": false, strings.Repeat("x", 249): true, strings.Repeat("x", 250): false} {
		if got := validateTopicName(name) == nil; got != ok {
			t.Errorf("%.20q: valid=%v, want %v", name, got, ok)
		}
	}
}
