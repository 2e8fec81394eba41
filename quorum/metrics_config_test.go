package quorum

import (
	"strings"
	"testing"
	"time"
)

// TestObservabilityKeys: the metricsProvider.* and admin.* keys are parsed
// and checked, no longer accepted and ignored.
func TestObservabilityKeys(t *testing.T) {
	for _, tc := range []struct {
		text    string
		check   func(Config) bool
		wantErr string
	}{
		{text: "metricsProvider.className=" + prometheusProviderClass + "\nmetricsProvider.httpPort=7001\nmetricsProvider.httpHost=127.0.0.1\nmetricsProvider.exportJvmInfo=false\n",
			check: func(c Config) bool {
				return c.Metrics == MetricsConfig{Enabled: true, Host: "127.0.0.1", Port: 7001, ExportJvmInfo: false}
			}},
		{text: "dataDir=/d\n", check: func(c Config) bool { return !c.Metrics.Enabled && c.Admin.Enabled && c.Admin.Port == 8080 }},
		{text: "metricsProvider.className=" + defaultProviderClass + "\n", check: func(c Config) bool { return !c.Metrics.Enabled }},
		{text: "metricsProvider.httpPort=0\n", check: func(c Config) bool { return c.Metrics.Port == 0 }},
		{text: "metricsProvider.numWorkerThreads=4\n", check: func(c Config) bool { return true }},
		{text: "admin.enableServer=false\nadmin.serverAddress=127.0.0.1\nadmin.serverPort=9090\nadmin.commandURL=/cmds/\nadmin.idleTimeout=500\n",
			check: func(c Config) bool {
				return c.Admin == AdminConfig{Enabled: false, Address: "127.0.0.1", Port: 9090, CommandURL: "/cmds", IdleTimeout: 500 * time.Millisecond}
			}},
		{text: "zookeeper.admin.serverPort=9091\n", check: func(c Config) bool { return c.Admin.Port == 9091 }},
		{text: "metricsProvider.className=com.example.Other\n", wantErr: "metricsProvider.className"},
		{text: "metricsProvider.httpPort=70000\n", wantErr: "metricsProvider.httpPort"},
		{text: "metricsProvider.exportJvmInfo=maybe\n", wantErr: "metricsProvider.exportJvmInfo"},
		{text: "metricsProvider.numWorkerThreads=x\n", wantErr: "metricsProvider.numWorkerThreads"},
		{text: "admin.enableServer=yes\n", wantErr: "admin.enableServer"},
		{text: "admin.serverPort=-1\n", wantErr: "admin.serverPort"},
		{text: "admin.serverAddress=a b\n", wantErr: "admin.serverAddress"},
		{text: "admin.commandURL=commands\n", wantErr: "admin.commandURL"},
		{text: "admin.idleTimeout=0\n", wantErr: "admin.idleTimeout"},
	} {
		c, _, err := parseZooCfg(t, tc.text)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want one about %s", tc.text, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.text, err)
		case !tc.check(c):
			t.Errorf("%q: metrics %+v admin %+v", tc.text, c.Metrics, c.Admin)
		}
	}
}
