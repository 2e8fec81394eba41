package differential

import (
	"slices"
	"strings"
	"testing"
)

func labels(id int64) string {
	switch id {
	case 0x100000360820000:
		return "s0g0"
	case 0x100000360820001:
		return "s1g0"
	}
	return "unknown-session"
}

// TestNormalizeFourLetterWord: answers that differ only in what may differ
// (ports, counters, latencies, times, bucket layout, hash order) normalize
// equal; answers that differ in a value compared as a value, a key or a
// line's shape do not.
func TestNormalizeFourLetterWord(t *testing.T) {
	for _, tc := range []struct {
		name, word string
		a, b       string
		equal      bool
	}{
		{"srvr counters", "srvr",
			"Zookeeper version: 3.8.0-abc, built on 2024-12-29 17:54 UTC\nLatency min/avg/max: 0/2.0/6\nReceived: 11\nSent: 10\nConnections: 3\nOutstanding: 0\nZxid: 0x5\nMode: standalone\nNode count: 8\n",
			"Zookeeper version: 3.8.0-zkafka, built on 1970-01-01 00:00 UTC\nLatency min/avg/max: 1/9.0E-4/2\nReceived: 99\nSent: 98\nConnections: 3\nOutstanding: 0\nZxid: 0x1f\nMode: standalone\nNode count: 8\n", true},
		{"srvr node count", "srvr", "Node count: 8\n", "Node count: 7\n", false},
		{"srvr latency shape", "srvr", "Latency min/avg/max: 0/2.0/6\n", "Latency min/avg/max: 0/2.0000/6\n", false},
		{"mntr order and counters", "mntr",
			"zk_version\t3.8.0-a, built on 2024-12-29 17:54 UTC\nzk_packets_sent\t12\nzk_znode_count\t8\nzk_avg_latency\t2.0\n",
			"zk_znode_count\t8\nzk_avg_latency\t0.3333\nzk_version\t3.8.0-b, built on 1970-01-01 00:00 UTC\nzk_packets_sent\t7\n", true},
		{"mntr missing key", "mntr", "zk_znode_count\t8\nzk_approximate_data_size\t59\n", "zk_znode_count\t8\n", false},
		{"mntr value", "mntr", "zk_approximate_data_size\t59\n", "zk_approximate_data_size\t58\n", false},
		{"mntr namespace sum", "mntr", "zk_sum_a_read_per_namespace\t221\nzk_max_a_read_per_namespace\t75\n", "zk_sum_a_read_per_namespace\t220\nzk_max_a_read_per_namespace\t75\n", false},
		{"cons ports, hash order, counters", "cons",
			" /127.0.0.1:41092[0](queued=0,recved=1,sent=0)\n /127.0.0.1:41062[1](queued=0,recved=5,sent=5,sid=0x100000360820000,lop=GETC,est=1796115889032,to=10000,lcxid=0x4,lzxid=0x5,lresp=235749,llat=1,minlat=0,avglat=3,maxlat=6)\n\n",
			" /127.0.0.1:5[1](queued=0,recved=9,sent=9,sid=0x100000360820000,lop=PING,est=1,to=10000,lzxid=0xffffffffffffffff,lresp=2,llat=0,minlat=0,avglat=0,maxlat=0)\n /127.0.0.1:6[0](queued=0,recved=1,sent=0)\n\n", true},
		{"cons session timeout", "cons",
			" /127.0.0.1:1[1](queued=0,recved=5,sent=5,sid=0x100000360820000,lop=GETC,est=1,to=10000,lzxid=0x5,lresp=2,llat=1,minlat=0,avglat=3,maxlat=6)\n",
			" /127.0.0.1:1[1](queued=0,recved=5,sent=5,sid=0x100000360820000,lop=GETC,est=1,to=4000,lzxid=0x5,lresp=2,llat=1,minlat=0,avglat=3,maxlat=6)\n", false},
		{"cons missing field", "cons",
			" /127.0.0.1:1[1](queued=0,recved=5,sent=5,sid=0x100000360820000,lop=GETC,est=1,to=10000,lzxid=0x5,lresp=2,llat=1,minlat=0,avglat=3,maxlat=6)\n",
			" /127.0.0.1:1[1](queued=0,recved=5,sent=5,sid=0x100000360820000,est=1,to=10000)\n", false},
		{"wchc hash order", "wchc", "0x100000360820001\n\t/nope\n\t/a\n0x100000360820000\n\t/a\n\n", "0x100000360820000\n\t/a\n0x100000360820001\n\t/a\n\t/nope\n\n", true},
		{"wchc extra watch", "wchc", "0x100000360820000\n\t/a\n\n", "0x100000360820000\n\t/a\n\t/b\n\n", false},
		{"dump buckets", "dump",
			"SessionTracker dump:\nSession Sets (1)/(2):\n2 expire at Tue Dec 01 09:04:59 UTC 2026:\n\t0x100000360820000\n\t0x100000360820001\nephemeral nodes dump:\nSessions with Ephemerals (1):\n0x100000360820001:\n\t/b\n\t/a\nConnections dump:\nConnections Sets (1)/(1):\n1 expire at Tue Dec 01 09:05:03 UTC 2026:\n\tip: /127.0.0.1:41062 sessionId: 0x100000360820000\n",
			"SessionTracker dump:\nSession Sets (2)/(2):\n1 expire at Tue Dec 01 09:04:59 UTC 2026:\n\t0x100000360820001\n1 expire at Tue Dec 01 09:05:01 UTC 2026:\n\t0x100000360820000\nephemeral nodes dump:\nSessions with Ephemerals (1):\n0x100000360820001:\n\t/a\n\t/b\nConnections dump:\nConnections Sets (2)/(1):\n1 expire at Tue Dec 01 09:05:09 UTC 2026:\n\tip: /127.0.0.1:9 sessionId: 0x100000360820000\n", true},
		{"dump ephemeral owner", "dump",
			"ephemeral nodes dump:\nSessions with Ephemerals (1):\n0x100000360820001:\n\t/b\n",
			"ephemeral nodes dump:\nSessions with Ephemerals (1):\n0x100000360820000:\n\t/b\n", false},
		{"envi JVM values", "envi", "Environment:\njava.version=17.0.15\nos.name=Linux\nos.memory.free=323MB\n", "Environment:\njava.version=go1.24\nos.name=Linux\nos.memory.free=3MB\n", true},
		{"envi missing key", "envi", "Environment:\njava.home=/usr\nos.name=Linux\n", "Environment:\nos.name=Linux\n", false},
		{"ruok trailing newline", "ruok", "imok", "imok\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NormalizeFourLetterWord(tc.word, tc.a, labels)
			b := NormalizeFourLetterWord(tc.word, tc.b, labels)
			if got := slices.Equal(a, b); got != tc.equal {
				t.Errorf("equal = %v, want %v\nA:\n%s\nB:\n%s", got, tc.equal, strings.Join(a, "\n"), strings.Join(b, "\n"))
			}
		})
	}
}
