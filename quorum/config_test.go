package quorum

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/properties"
)

// parseZooCfg parses dataDir=/data plus extra, and returns what was logged.
func parseZooCfg(t *testing.T, extra string) (Config, string, error) {
	t.Helper()
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := ParseConfig(strings.NewReader("dataDir=/data\n"+extra), log)
	return c, logs.String(), err
}

// zooCfgCases are one or more zoo.cfg lines each; bad names the key the
// error must name ("" = the lines are good), check tests a good result.
var zooCfgCases = []struct {
	lines string
	bad   string
	check func(c Config) bool
}{
	{"tickTime=500", "", func(c Config) bool {
		return c.TickTime == 500*time.Millisecond && c.MinSessionTimeout == time.Second && c.MaxSessionTimeout == 10*time.Second
	}},
	{"tickTime= 500 ", "", func(c Config) bool { return c.TickTime == 500*time.Millisecond }},
	{"tickTime=0", "tickTime", nil},
	{"tickTime=-1", "tickTime", nil},
	{"tickTime=2s", "tickTime", nil},
	{"tickTime=200000000", "tickTime", nil},
	{"initLimit=3", "", func(c Config) bool { return c.InitLimit == 3 }},
	{"initLimit=0", "initLimit", nil},
	{"initLimit=ten", "initLimit", nil},
	{"syncLimit=2", "", func(c Config) bool { return c.SyncLimit == 2 }},
	{"syncLimit=0", "syncLimit", nil},
	{"syncLimit=-5", "syncLimit", nil},
	{"dataDir=/var/zk", "", func(c Config) bool { return c.DataDir == "/var/zk" && c.DataLogDir == "/var/zk" }},
	{"dataDir=", "dataDir", nil},
	{"dataLogDir=/var/zklog", "", func(c Config) bool { return c.DataLogDir == "/var/zklog" }},
	{"dataLogDir= ", "dataLogDir", nil},
	{"clientPort=2182", "", func(c Config) bool { return c.ClientPort == 2182 }},
	{"clientPort=0", "clientPort", nil},
	{"clientPort=65536", "clientPort", nil},
	{"clientPort=http", "clientPort", nil},
	{"clientPortAddress=127.0.0.1", "", func(c Config) bool { return c.ClientAddr() == "127.0.0.1:2181" }},
	{"clientPortAddress=[::1]", "", func(c Config) bool { return c.ClientAddr() == "[::1]:2181" }},
	{"clientPortAddress=zk-1.example", "", func(c Config) bool { return c.ClientPortAddress == "zk-1.example" }},
	{"clientPortAddress=", "clientPortAddress", nil},
	{"clientPortAddress=127.0.0.1:2181", "clientPortAddress", nil},
	{"maxClientCnxns=0", "", func(c Config) bool { return c.MaxClientCnxns == 0 }},
	{"maxClientCnxns=500", "", func(c Config) bool { return c.MaxClientCnxns == 500 }},
	{"maxClientCnxns=-1", "maxClientCnxns", nil},
	{"minSessionTimeout=3000\nmaxSessionTimeout=9000", "", func(c Config) bool {
		return c.MinSessionTimeout == 3*time.Second && c.MaxSessionTimeout == 9*time.Second
	}},
	{"minSessionTimeout=-1\nmaxSessionTimeout=-1", "", func(c Config) bool {
		return c.MinSessionTimeout == 4*time.Second && c.MaxSessionTimeout == 40*time.Second
	}},
	{"minSessionTimeout=-2", "minSessionTimeout", nil},
	{"minSessionTimeout=1s", "minSessionTimeout", nil},
	{"maxSessionTimeout=0", "maxSessionTimeout", nil},
	{"maxSessionTimeout=x", "maxSessionTimeout", nil},
	{"minSessionTimeout=10000\nmaxSessionTimeout=5000", "minSessionTimeout", nil},
	{"tickTime=1000\nmaxSessionTimeout=1000", "maxSessionTimeout", nil},  // the default min, 2 ticks, is above it
	{"tickTime=1000\nminSessionTimeout=30000", "minSessionTimeout", nil}, // the default max is 20 ticks
	{"autopurge.snapRetainCount=5", "", func(c Config) bool { return c.SnapRetainCount == 5 }},
	{"autopurge.snapRetainCount=1", "", func(c Config) bool { return c.SnapRetainCount == 3 }},
	{"autopurge.snapRetainCount=many", "autopurge.snapRetainCount", nil},
	{"autopurge.purgeInterval=0", "", func(c Config) bool { return c.PurgeInterval == 0 }},
	{"autopurge.purgeInterval=24", "", func(c Config) bool { return c.PurgeInterval == 24 }},
	{"autopurge.purgeInterval=1h", "autopurge.purgeInterval", nil},
	{"4lw.commands.whitelist=srvr, ruok", "", func(c Config) bool {
		return c.FourLetterWords["srvr"] && c.FourLetterWords["ruok"] && !c.FourLetterWords["stat"]
	}},
	{"4lw.commands.whitelist=*", "", func(c Config) bool { return c.FourLetterWords["mntr"] && c.FourLetterWords["dump"] }},
	{"jute.maxbuffer=0x200000", "", func(c Config) bool { return c.JuteMaxBuffer == 0x200000 }},
	{"jute.maxbuffer=#10", "", func(c Config) bool { return c.JuteMaxBuffer == 16 }},
	{"jute.maxbuffer=010", "", func(c Config) bool { return c.JuteMaxBuffer == 8 }},
	{"jute.maxbuffer=4194304", "", func(c Config) bool { return c.JuteMaxBuffer == 4194304 }},
	{"jute.maxbuffer=0", "jute.maxbuffer", nil},
	{"jute.maxbuffer=-1", "jute.maxbuffer", nil},
	{"jute.maxbuffer=1_000", "jute.maxbuffer", nil},
	{"jute.maxbuffer=0x80000000", "jute.maxbuffer", nil},
	{"extendedTypesEnabled=true", "", func(c Config) bool { return c.ExtendedTypes }},
	{"zookeeper.extendedTypesEnabled=TRUE", "", func(c Config) bool { return c.ExtendedTypes }},
	{"extendedTypesEnabled=yes", "extendedTypesEnabled", nil},
	{"enforceQuota=true", "", func(c Config) bool { return c.EnforceQuota }},
	{"zookeeper.enforceQuota=true", "", func(c Config) bool { return c.EnforceQuota }},
	{"enforceQuota=maybe", "enforceQuota", nil},
	{"snapCount=1000", "", func(c Config) bool { return c.SnapCount == 1000 }},
	{"snapCount=1", "", func(c Config) bool { return c.SnapCount == 2 }},
	{"snapCount=-5", "", func(c Config) bool { return c.SnapCount == 2 }},
	{"snapCount=lots", "snapCount", nil},
	{"znode.container.checkIntervalMs=1000", "", func(c Config) bool { return c.ContainerInterval == time.Second }},
	{"znode.container.checkIntervalMs=0", "znode.container.checkIntervalMs", nil},
	{"znode.container.checkIntervalMs=-100", "znode.container.checkIntervalMs", nil},
	{"DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=", "", func(c Config) bool {
		return c.SuperDigest == "super:D/InIHSb7yEEbrWz8b9l71RjZJU="
	}},
	{"superDigest=nocolon", "superDigest", nil},
	{"zookeeper.DigestAuthenticationProvider.superDigest=super:", "zookeeper.DigestAuthenticationProvider.superDigest", nil},
	{"standaloneEnabled=false\nadmin.enableServer=false\nreconfigEnabled=true", "", func(Config) bool { return true }},
	{"standaloneEnabled=maybe", "standaloneEnabled", nil},
	{"quorumListenOnAllIPs=TRUE\njvm.pause.sleep.time.ms=500\nmetricsProvider.exportJvmInfo=true", "", func(Config) bool { return true }},
	{"secureClientPort=tls", "secureClientPort", nil},
	// The secure client port (config_tls.go).
	{"secureClientPort=2281", "secureClientPort", nil}, // no ssl.keyStore.location
	{"secureClientPort=2281\nsecureClientPortAddress=10.0.0.1\nssl.keyStore.location=/k.p12\nssl.keyStore.type=pkcs12\nserverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory", "", func(c Config) bool {
		return c.SecureClientAddr() == "10.0.0.1:2281" && c.TLS.KeyStore == "/k.p12" && c.TLS.ClientAuth == tls.RequireAndVerifyClientCert
	}},
	{"ssl.keyStore.type=BKS", "ssl.keyStore.type", nil},
	{"ssl.trustStore.type=JKS\nssl.clientAuth=Want", "", func(c Config) bool { return c.TLS.ClientAuth == tls.VerifyClientCertIfGiven }},
	{"ssl.clientAuth=none", "", func(c Config) bool { return c.TLS.ClientAuth == tls.NoClientCert }},
	{"ssl.clientAuth=maybe", "ssl.clientAuth", nil},
	{"ssl.protocol=TLSv1.3", "", func(c Config) bool {
		return c.TLS.MinVersion == tls.VersionTLS13 && c.TLS.MaxVersion == tls.VersionTLS13
	}},
	{"ssl.enabledProtocols=TLSv1.2, TLSv1.3\nssl.protocol=TLSv1.3", "", func(c Config) bool {
		return c.TLS.MinVersion == tls.VersionTLS12 && c.TLS.MaxVersion == tls.VersionTLS13
	}},
	{"ssl.protocol=TLSv1.1", "ssl.protocol", nil},
	{"ssl.ciphersuites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256", "", func(c Config) bool {
		return len(c.TLS.CipherSuites) == 1 && c.TLS.CipherSuites[0] == tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
	}},
	{"ssl.ciphersuites=TLS_RSA_WITH_RC4_128_SHA", "ssl.ciphersuites", nil},
	{"ssl.hostnameVerification=maybe", "ssl.hostnameVerification", nil},
	{"ssl.quorum.keyStore.location=/q.jks\nX509AuthenticationProvider.superUser=CN=admin", "", func(c Config) bool { return c.X509SuperUser == "CN=admin" }},
	{"jvm.pause.warn-threshold.ms=1s", "jvm.pause.warn-threshold.ms", nil},
	{"electionAlg=3", "", func(Config) bool { return true }},
	{"electionAlg=1", "electionAlg", nil},
	{"peerType=observer", "", func(Config) bool { return true }},
	{"peerType=leader", "peerType", nil},
	{"dynamicConfigFile=/etc/zk/zoo.cfg.dynamic", "dynamicConfigFile", nil},
	{"group.1=1:2:3", "group.1", nil},
	{"weight.1=2", "weight.1", nil},
}

// serverCases are server.N lines over a valid ensemble of three.
var serverCases = []struct {
	line string
	bad  string
	want ServerSpec
}{
	{"server.4=zk4:2888:3888", "", ServerSpec{ID: 4, Host: "zk4", PeerPort: 2888, ElectPort: 3888}},
	{"server.4=zk4:2888:3888:observer", "", ServerSpec{ID: 4, Host: "zk4", PeerPort: 2888, ElectPort: 3888, Observer: true}},
	{"server.4=zk4:2888:3888:Participant", "", ServerSpec{ID: 4, Host: "zk4", PeerPort: 2888, ElectPort: 3888}},
	{"server.4=zk4:2888:3888;2181", "", ServerSpec{ID: 4, Host: "zk4", PeerPort: 2888, ElectPort: 3888, ClientPort: 2181}},
	{"server.4=zk4:2888:3888:participant;10.0.0.4:2181", "", ServerSpec{ID: 4, Host: "zk4", PeerPort: 2888, ElectPort: 3888, ClientHost: "10.0.0.4", ClientPort: 2181}},
	{"server.4=[fe80::4]:2888:3888;[::1]:2181", "", ServerSpec{ID: 4, Host: "fe80::4", PeerPort: 2888, ElectPort: 3888, ClientHost: "::1", ClientPort: 2181}},
	{"server.255=zk4:2888:3888", "", ServerSpec{ID: 255, Host: "zk4", PeerPort: 2888, ElectPort: 3888}},
	{"server.x=zk4:2888:3888", "server.x", ServerSpec{}},
	{"server.0=zk4:2888:3888", "server.0", ServerSpec{}},
	{"server.256=zk4:2888:3888", "server.256", ServerSpec{}},
	{"server.-4=zk4:2888:3888", "server.-4", ServerSpec{}},
	{"server.4=zk4:2888", "server.4", ServerSpec{}},
	{"server.4=zk4:2888:3888:leader", "server.4", ServerSpec{}},
	{"server.4=zk4:peer:3888", "server.4", ServerSpec{}},
	{"server.4=zk4:2888:70000", "server.4", ServerSpec{}},
	{"server.4=zk4:0:3888", "server.4", ServerSpec{}},
	{"server.4=zk4:2888:2888", "server.4", ServerSpec{}},
	{"server.4=:2888:3888", "server.4", ServerSpec{}},
	{"server.4=zk4:2888:3888;x", "server.4", ServerSpec{}},
	{"server.4=zk4:2888:3888;1;2", "server.4", ServerSpec{}},
	{"server.4=zk4:2888:3888|zk5:2888:3888", "server.4", ServerSpec{}},
	{"server.4=zk1:2888:3889", "server.4", ServerSpec{}},   // zk1:2888 is server.1's peer address
	{"server.01=zk9:2888:3888", "server.01", ServerSpec{}}, // server.1 twice
}

const threeServers = "server.1=zk1:2888:3888\nserver.2=zk2:2888:3888\nserver.3=zk3:2888:3888\n"

func TestParseConfigValues(t *testing.T) {
	for _, tc := range zooCfgCases {
		c, logs, err := parseZooCfg(t, tc.lines+"\n")
		checkZooCfgCase(t, tc.lines, tc.bad, err, logs)
		if err == nil && tc.check != nil && !tc.check(c) {
			t.Errorf("%q: parsed %+v", tc.lines, c)
		}
		if err == nil && tc.check == nil {
			t.Errorf("%q: accepted", tc.lines)
		}
	}
}

func TestParseConfigServers(t *testing.T) {
	for _, tc := range serverCases {
		c, logs, err := parseZooCfg(t, threeServers+tc.line+"\n")
		checkZooCfgCase(t, tc.line, tc.bad, err, logs)
		if err == nil && (len(c.Servers) != 4 || c.Servers[3] != tc.want) {
			t.Errorf("%q: servers %+v", tc.line, c.Servers)
		}
	}
}

// warningCases are the good zooCfgCases that ZooKeeper accepts with a
// warning (and a corrected value).
var warningCases = map[string]bool{"autopurge.snapRetainCount=1": true, "snapCount=1": true, "snapCount=-5": true}

// checkZooCfgCase checks that a good case parsed without a warning and a
// bad one failed with a one-line *properties.Error naming its key.
func checkZooCfgCase(t *testing.T, lines, bad string, err error, logs string) {
	t.Helper()
	var e *properties.Error
	switch {
	case bad == "" && err != nil:
		t.Errorf("%q: %v", lines, err)
	case bad == "" && strings.Contains(logs, "level=WARN") != warningCases[lines]:
		t.Errorf("%q: warnings: %s", lines, logs)
	case bad != "" && !errors.As(err, &e):
		t.Errorf("%q: err %v, want a *properties.Error", lines, err)
	case bad != "" && (e.Key != bad || e.Line < 2 || strings.Contains(err.Error(), "\n")):
		t.Errorf("%q: error %q names key %q on line %d, want key %q", lines, err, e.Key, e.Line, bad)
	}
}

func TestParseConfigSyntaxError(t *testing.T) {
	_, _, err := parseZooCfg(t, "tickTime=2000\nkey=\\u12\n")
	var e *properties.Error
	if !errors.As(err, &e) || e.Line != 3 || !strings.Contains(err.Error(), `malformed \uxxxx`) {
		t.Fatalf("err %v", err)
	}
}

func TestParseConfigRelations(t *testing.T) {
	for _, tc := range []struct{ name, cfg, want string }{
		{"only observers", "server.01=zk1:2888:3888:observer\nserver.2=zk2:2888:3888:observer\n", "server.01=zk1:2888:3888:observer: an ensemble needs at least one participant"},
		{"client port differs from server line", threeServers + "clientPort=2182\nserver.4=zk4:2888:3888;2181\n", ""},
	} {
		_, _, err := parseZooCfg(t, tc.cfg)
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err %v, want one about %q", tc.name, err, tc.want)
		}
		if tc.want == "" && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestParseConfigWarnsUnknownKeysOnly(t *testing.T) {
	_, logs, err := parseZooCfg(t, "no.such.key=1\npreAllocSize=8080\n4lw.commands.whitelist=srvr,nope\nautopurge.snapRetainCount=1\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`level=WARN msg="zoo.cfg: unknown key ignored" key=no.such.key line=2`,
		`level=DEBUG msg="zoo.cfg: key accepted and ignored" key=preAllocSize`,
		`level=WARN msg="zoo.cfg: unknown four-letter word in 4lw.commands.whitelist" word=nope`,
		`level=WARN msg="zoo.cfg: autopurge.snapRetainCount below 3; using 3"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "preAllocSize line") || strings.Count(logs, "level=WARN") != 3 {
		t.Errorf("warnings:\n%s", logs)
	}
}

// TestLoadConfigMyid covers the myid file: present, a number, in range,
// and one of the server.N ids of an ensemble.
func TestLoadConfigMyid(t *testing.T) {
	for _, tc := range []struct {
		name, cfg, myid string // myid "-" = no myid file
		want            string // "" = good; else a piece of the error
	}{
		{"standalone without myid", "", "-", ""},
		{"standalone with myid", "", "7\n", ""},
		{"ensemble", threeServers, "2\n", ""},
		{"ensemble without myid", threeServers, "-", "needs"},
		{"myid not a number", threeServers, "two\n", `myid: two: must be`},
		{"myid not in the list", threeServers, "4\n", `myid: 4: is not the id of a server.N line (1, 2, 3)`},
		{"myid zero in an ensemble", threeServers, "0\n", `myid: 0: must be`},
		{"myid too big", "", "256\n", `myid: 256: must be`},
		{"client port of the server line", threeServers + "clientPort=2181\nclientPortAddress=127.0.0.1\nserver.4=zk4:2888:3888;127.0.0.1:2181\n", "4\n", ""},
		{"client port differs from the server line", threeServers + "clientPort=2182\nserver.4=zk4:2888:3888;2181\n", "4\n", "differ from the client address of this server's server.4 line (0.0.0.0:2181)"},
		{"client address differs from the server line", threeServers + "clientPort=2181\nclientPortAddress=127.0.0.1\nserver.4=zk4:2888:3888;2181\n", "4\n", "differ"},
		{"another server's client port", threeServers + "clientPort=2182\nserver.4=zk4:2888:3888;2181\n", "1\n", ""},
		{"myid 255 with TTL nodes", "extendedTypesEnabled=true\nserver.255=zk4:2888:3888\n" + threeServers, "255\n", "254"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfgPath := filepath.Join(dir, "zoo.cfg")
			writeTestFile(t, cfgPath, "dataDir="+dir+"\n"+tc.cfg)
			if tc.myid != "-" {
				writeTestFile(t, filepath.Join(dir, "myid"), tc.myid)
			}
			_, err := LoadConfig(cfgPath, nil)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var e *properties.Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v, want an *properties.Error with %q", err, tc.want)
			}
		})
	}
}

func TestLoadConfigNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "zoo.cfg")
	writeTestFile(t, cfgPath, "# a comment\ndataDir="+dir+"\ntickTime=0\n")
	_, err := LoadConfig(cfgPath, nil)
	if err == nil || err.Error() != cfgPath+":3: tickTime=0: must be an integer from 1 to 107374182 (milliseconds)" {
		t.Fatalf("err %v", err)
	}
	writeTestFile(t, cfgPath, "clientPort=2181\n")
	if _, err := LoadConfig(cfgPath, nil); err == nil || !strings.HasPrefix(err.Error(), cfgPath+": dataDir is not set") {
		t.Fatalf("err %v", err)
	}
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzParseConfig: any zoo.cfg text parses or fails with a one-line
// *properties.Error, never a panic.
func FuzzParseConfig(f *testing.F) {
	for _, tc := range zooCfgCases {
		f.Add("dataDir=/d\n" + tc.lines)
	}
	for _, tc := range serverCases {
		f.Add(threeServers + tc.line)
	}
	f.Fuzz(func(t *testing.T, text string) {
		_, err := ParseConfig(strings.NewReader(text), nil)
		var e *properties.Error
		if err != nil && (!errors.As(err, &e) || strings.ContainsAny(err.Error(), "\r\n")) {
			t.Fatalf("%q: error %q", text, err)
		}
	})
}
