package quorum

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/internal/properties"
)

const dynamicThree = "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\n" +
	"server.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\n" +
	"server.3=127.0.0.1:2890:3890:observer;127.0.0.1:2183\n"

// TestDynamicConfigFile: the server.N lines come from dynamicConfigFile and
// the version from its name's hex suffix, shown in /zookeeper/config.
func TestDynamicConfigFile(t *testing.T) {
	dir := t.TempDir()
	dyn := filepath.Join(dir, "zoo.cfg.dynamic.100000000")
	writeTestFile(t, dyn, dynamicThree)
	cfgPath := filepath.Join(dir, "zoo.cfg")
	writeTestFile(t, cfgPath, "dataDir="+dir+"\nreconfigEnabled=true\ndynamicConfigFile="+dyn+"\n")
	writeTestFile(t, filepath.Join(dir, "myid"), "2\n")
	c, err := LoadConfig(cfgPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Servers) != 3 || !c.Servers[2].Observer || c.MyID != 2 || !c.ReconfigEnabled || c.ConfigVersion != 0x100000000 {
		t.Fatalf("config %+v", c)
	}
	want := dynamicThree + "version=100000000"
	if got := c.DynamicConfigText(); got != want {
		t.Fatalf("config text\n%s\nwant\n%s", got, want)
	}
}

func TestDynamicConfigVersion(t *testing.T) {
	for name, want := range map[string]uint64{
		"zoo.cfg.dynamic.0": 0, "zoo.cfg.dynamic.1001": 0x1001, "zoo.cfg.dynamic": 0,
		"/a.b/zoo.cfg.dynamic.100000000": 0x100000000, "dyn": 0,
	} {
		if got := dynamicConfigVersion(name); got != want {
			t.Errorf("%s: %#x, want %#x", name, got, want)
		}
	}
}

// TestDynamicConfigFileErrors: what ZooKeeper refuses, refused with the
// file and key named.
func TestDynamicConfigFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, zooCfg, dynamic, want string
	}{
		{"server line beside the dynamic file", "server.1=127.0.0.1:2888:3888\n", dynamicThree, "server.1=127.0.0.1:2888:3888: must be in a separate dynamic config file"},
		{"version inside", "", dynamicThree + "version=100000000\n", "version=100000000: a dynamic configuration file must not hold its version"},
		{"other key inside", "", dynamicThree + "tickTime=2000\n", "tickTime=2000: unrecognised parameter"},
		{"bad server line", "", "server.1=nohost\n", "server.1=nohost: must be host:peerPort"},
		{"missing file", "", "-", "cannot read the dynamic configuration file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dyn := filepath.Join(dir, "zoo.cfg.dynamic.1")
			if tc.dynamic != "-" {
				writeTestFile(t, dyn, tc.dynamic)
			}
			cfgPath := filepath.Join(dir, "zoo.cfg")
			writeTestFile(t, cfgPath, "dataDir="+dir+"\n"+tc.zooCfg+"dynamicConfigFile="+dyn+"\n")
			writeTestFile(t, filepath.Join(dir, "myid"), "1\n")
			_, err := LoadConfig(cfgPath, nil)
			var e *properties.Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v, want an *properties.Error with %q", err, tc.want)
			}
		})
	}
}
