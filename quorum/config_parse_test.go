package quorum

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParseConfig parses a few representative zoo.cfg files and checks the
// fields they set and the defaults derived from them. It covers parsing
// only; validation of values has its own tests.
func TestParseConfig(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		check func(t *testing.T, c Config)
	}{{
		name: "ZooKeeper's zoo_sample.cfg",
		text: `# The number of milliseconds of each tick
tickTime=2000
initLimit=10
syncLimit=5
dataDir=/tmp/zookeeper
clientPort=2181
#maxClientCnxns=60
#autopurge.snapRetainCount=3
#autopurge.purgeInterval=1

## Metrics Providers
#metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
`,
		check: func(t *testing.T, c Config) {
			want := Config{
				TickTime: 2 * time.Second, InitLimit: 10, SyncLimit: 5,
				DataDir: "/tmp/zookeeper", DataLogDir: "/tmp/zookeeper", ClientPort: 2181,
				MaxClientCnxns: 60, MinSessionTimeout: 4 * time.Second, MaxSessionTimeout: 40 * time.Second,
				SnapRetainCount: 3, JuteMaxBuffer: 0xfffff, SnapCount: 100000,
				ContainerInterval: time.Minute, FourLetterWords: map[string]bool{"srvr": true},
				// ZooKeeper's defaults: no metrics provider, the AdminServer on.
				Metrics:         MetricsConfig{Host: "0.0.0.0", Port: 7000, ExportJvmInfo: true},
				Admin:           AdminConfig{Enabled: true, Address: "0.0.0.0", Port: 8080, CommandURL: "/commands", IdleTimeout: 30 * time.Second},
				TLS:             defaultTLSConfig(),
				QuorumTLS:       defaultTLSConfig(),
				clientPortGiven: true,
			}
			c.initialText = ""
			if !reflect.DeepEqual(c, want) {
				t.Fatalf("got  %+v\nwant %+v", c, want)
			}
		},
	}, {
		name: "an ensemble member",
		text: `tickTime=500
initLimit=5
syncLimit=2
dataDir=/var/lib/zk/data
dataLogDir=/var/lib/zk/log
clientPort=2181
clientPortAddress=127.0.0.1
server.1=zk1.example:2888:3888
server.2=zk2.example:2888:3888:participant;2182
server.3=zk3.example:2888:3888:observer;127.0.0.3:2183
`,
		check: func(t *testing.T, c Config) {
			if c.TickTime != 500*time.Millisecond || c.MinSessionTimeout != time.Second || c.MaxSessionTimeout != 10*time.Second {
				t.Errorf("tickTime %v, session timeouts [%v, %v]; want 500ms, [1s, 10s]", c.TickTime, c.MinSessionTimeout, c.MaxSessionTimeout)
			}
			if c.DataLogDir != "/var/lib/zk/log" || c.ClientPortAddress != "127.0.0.1" {
				t.Errorf("dataLogDir %q, clientPortAddress %q", c.DataLogDir, c.ClientPortAddress)
			}
			want := []ServerSpec{
				{ID: 1, Host: "zk1.example", PeerPort: 2888, ElectPort: 3888},
				{ID: 2, Host: "zk2.example", PeerPort: 2888, ElectPort: 3888, ClientPort: 2182},
				{ID: 3, Host: "zk3.example", PeerPort: 2888, ElectPort: 3888, Observer: true, ClientHost: "127.0.0.3", ClientPort: 2183},
			}
			if !reflect.DeepEqual(c.Servers, want) {
				t.Errorf("servers:\ngot  %+v\nwant %+v", c.Servers, want)
			}
			c.MyID = 3
			if got := c.ClientAddr(); got != "127.0.0.3:2183" {
				t.Errorf("server 3's client address %q, want its server.3 line's 127.0.0.3:2183", got)
			}
		},
	}, {
		name: "the keys zkafka acts on, ':' as a separator, spaces around values",
		text: `tickTime : 1000
dataDir=/d
! a comment in the other style
4lw.commands.whitelist=*
jute.maxbuffer=0x200000
minSessionTimeout=1500
maxSessionTimeout = 30000
maxClientCnxns=0
autopurge.snapRetainCount=1
snapCount=5000
znode.container.checkIntervalMs=250
extendedTypesEnabled=true
zookeeper.DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=
standaloneEnabled=false
`,
		check: func(t *testing.T, c Config) {
			if c.TickTime != time.Second || c.MinSessionTimeout != 1500*time.Millisecond || c.MaxSessionTimeout != 30*time.Second {
				t.Errorf("tickTime %v, session timeouts [%v, %v]", c.TickTime, c.MinSessionTimeout, c.MaxSessionTimeout)
			}
			if c.JuteMaxBuffer != 0x200000 || c.MaxClientCnxns != 0 || c.SnapCount != 5000 || c.ContainerInterval != 250*time.Millisecond {
				t.Errorf("jute.maxbuffer %#x, maxClientCnxns %d, snapCount %d, container interval %v", c.JuteMaxBuffer, c.MaxClientCnxns, c.SnapCount, c.ContainerInterval)
			}
			if c.SnapRetainCount != 3 {
				t.Errorf("autopurge.snapRetainCount=1 gave %d; ZooKeeper raises it to 3", c.SnapRetainCount)
			}
			if !c.ExtendedTypes || c.SuperDigest != "super:D/InIHSb7yEEbrWz8b9l71RjZJU=" {
				t.Errorf("extendedTypes %v, superDigest %q", c.ExtendedTypes, c.SuperDigest)
			}
			if len(c.FourLetterWords) != len(fourLetterWords) {
				t.Errorf("whitelist * enabled %d words, want all %d", len(c.FourLetterWords), len(fourLetterWords))
			}
		},
	}, {
		name: "a whitelist of some words",
		text: "dataDir=/d\n4lw.commands.whitelist=ruok, mntr ,srvr,\n",
		check: func(t *testing.T, c Config) {
			if want := map[string]bool{"ruok": true, "mntr": true, "srvr": true}; !reflect.DeepEqual(c.FourLetterWords, want) {
				t.Errorf("whitelist %v, want %v", c.FourLetterWords, want)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig(strings.NewReader(tc.text), nil)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}
