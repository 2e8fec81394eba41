package kafkatool

import (
	"hash/crc32"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMurmur2KafkaVectors checks murmur2 against the vectors of Kafka's
// UtilsTest.testMurmur2 (clients/src/test/java/org/apache/kafka/common/utils).
func TestMurmur2KafkaVectors(t *testing.T) {
	for in, want := range map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	} {
		if got := murmur2([]byte(in)); got != want {
			t.Errorf("murmur2(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestMurmur2PartitionMatchesFranzGo: franz-go's StickyKeyPartitioner(nil)
// is documented to place keys as Kafka's Java producer does; ours agrees.
func TestMurmur2PartitionMatchesFranzGo(t *testing.T) {
	ref := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for i := 0; i < 500; i++ {
		key := []byte{byte(i), byte(i >> 8), 'k', byte(i * 7)}[:1+i%4]
		for _, n := range []int{1, 3, 12, 50} {
			want := ref.Partition(&kgo.Record{Key: key}, n)
			if got := murmur2Partition(key, n); got != want {
				t.Fatalf("key %x over %d: %d, franz-go says %d", key, n, got, want)
			}
		}
	}
	// toPositive(-790332482) % 50 = 1357151166 % 50
	if got := murmur2Partition([]byte("foobar"), 50); got != 16 {
		t.Errorf("foobar over 50 = %d, want 16", got)
	}
}

func TestPlacement(t *testing.T) {
	p, _ := newPlacement("consistent_random")
	if got, want := p.partition([]byte("key"), 7), int(crc32.ChecksumIEEE([]byte("key"))%7); got != want {
		t.Errorf("consistent_random: %d, want %d", got, want)
	}
	rr, _ := newPlacement("round-robin")
	var got []int
	for i := 0; i < 5; i++ {
		got = append(got, rr.partition([]byte("same key"), 3))
	}
	if !reflect.DeepEqual(got, []int{0, 1, 2, 0, 1}) {
		t.Errorf("round-robin: %v", got)
	}
	st, _ := newPlacement("murmur2")
	first := st.partition(nil, 1000)
	for i := 0; i < 10; i++ {
		if p := st.partition(nil, 1000); p != first {
			t.Fatalf("sticky moved within a batch: %d then %d", first, p)
		}
	}
	moved := false
	for i := 0; i < 20 && !moved; i++ {
		st.newBatch()
		moved = st.partition(nil, 1000) != first
	}
	if !moved {
		t.Error("sticky never moved on new batches")
	}
	if _, err := newPlacement("hash"); err == nil {
		t.Error("an unknown partitioner was accepted")
	}
}

func TestFormat(t *testing.T) {
	f, err := parseFormat(`%t/%p@%o %k=%s %K %S %T [%h] 100%%\n`)
	if err != nil {
		t.Fatal(err)
	}
	r := &kgo.Record{Topic: "t", Partition: 2, Offset: 41, Key: []byte("k"), Value: []byte("vv"),
		Timestamp: time.UnixMilli(1700000000123), Headers: []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b"}}}
	if got, want := string(f.append(nil, r)), "t/2@41 k=vv 1 2 1700000000123 [a=1,b=] 100%\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := string(f.append(nil, &kgo.Record{Topic: "t"})); got != "t/0@0 = -1 -1 "+strconv.FormatInt(time.Time{}.UnixMilli(), 10)+" [] 100%\n" {
		t.Errorf("nil key and value: %q", got)
	}
	for _, bad := range []string{"%x", "abc%"} {
		if _, err := parseFormat(bad); err == nil {
			t.Errorf("parseFormat(%q) accepted", bad)
		}
	}
}

func TestRangeAssign(t *testing.T) {
	ps := []int32{5, 4, 3, 2, 1, 0, 6}
	cs := []string{"c", "a", "b"}
	want := map[string][]int32{"a": {0, 1, 2}, "b": {3, 4}, "c": {5, 6}}
	seen := map[int32]bool{}
	for _, c := range cs {
		got := rangeAssign(ps, cs, c)
		if !reflect.DeepEqual(got, want[c]) {
			t.Errorf("%s: %v, want %v", c, got, want[c])
		}
		for _, p := range got {
			if seen[p] {
				t.Errorf("partition %d assigned twice", p)
			}
			seen[p] = true
		}
	}
	if got := rangeAssign(ps, cs, "d"); got != nil {
		t.Errorf("a non-member got %v", got)
	}
	if got := rangeAssign([]int32{0}, []string{"a", "b"}, "b"); len(got) != 0 {
		t.Errorf("more consumers than partitions: b got %v", got)
	}
}

func TestSplitZooKeeper(t *testing.T) {
	s, c, err := splitZooKeeper("a:1,b/kafka/x/")
	if err != nil || !reflect.DeepEqual(s, []string{"a:1", "b:2181"}) || c != "/kafka/x" {
		t.Errorf("got %v %q %v", s, c, err)
	}
	if _, _, err := splitZooKeeper("/chroot"); err == nil {
		t.Error("no hosts accepted")
	}
}

func TestPercentile(t *testing.T) {
	var l latencies
	for i := 1; i <= 1000; i++ {
		l.add(time.Duration(i) * time.Millisecond)
	}
	s := l.summarize("x", 1000, 0, 0, time.Second)
	if s.P50 != 500 || s.P99 != 990 || s.P999 != 999 || s.Max != 1000 || s.RecordsSec != 1000 {
		t.Errorf("%+v", s)
	}
}

func TestParseEnsembleConfig(t *testing.T) {
	got := parseEnsembleConfig("server.2=10.0.0.2:2888:3888:participant;0.0.0.0:2181\n" +
		"server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2182\nserver.3=[::1]:2888:3888:observer;2183\nversion=100000000\n")
	want := []ensembleMember{{1, "participant", "127.0.0.1:2182"}, {2, "participant", "10.0.0.2:2181"}, {3, "observer", "[::1]:2183"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
