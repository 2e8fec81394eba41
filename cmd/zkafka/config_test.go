package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// runZkafka runs the command with a time bound; a bad configuration must
// stop it at once, before it serves anything.
func runZkafka(t *testing.T, args ...string) (code int, stderr string) {
	t.Helper()
	cmd := commandProcess(args)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var timedOut atomic.Bool
	bound := time.AfterFunc(30*time.Second, func() { timedOut.Store(true); cmd.Process.Kill() })
	err := cmd.Wait()
	bound.Stop()
	if timedOut.Load() {
		t.Fatalf("zkafka %v did not exit within 30 s; stderr:\n%s", args, errOut.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), errOut.String()
}

// TestBadConfigExitsWithOneLine: every configuration error stops start-up
// with exit status 2 and one line on stderr that names the file, the key,
// the value and what is allowed.
func TestBadConfigExitsWithOneLine(t *testing.T) {
	dir := t.TempDir()
	zooCfg := filepath.Join(dir, "zoo.cfg")
	serverProps := filepath.Join(dir, "server.properties")
	for _, tc := range []struct {
		name, file, text string
		args             []string
		want             []string // pieces of the line
	}{
		{"tickTime=0", zooCfg, "dataDir=" + dir + "\ntickTime=0\nclientPort=0\n", []string{"zookeeper", zooCfg},
			[]string{zooCfg + ":2:", "tickTime=0", "must be an integer from 1 to 107374182 (milliseconds)"}},
		{"clientPort=0", zooCfg, "dataDir=" + dir + "\nclientPort=0\n", []string{"zookeeper", zooCfg},
			[]string{zooCfg + ":2:", "clientPort=0", "from 1 to 65535"}},
		{"container interval 0", zooCfg, "dataDir=" + dir + "\nclientPortAddress=127.0.0.1\nznode.container.checkIntervalMs=0\n", []string{"zookeeper", zooCfg},
			[]string{zooCfg + ":3:", "znode.container.checkIntervalMs=0", "must be an integer from 1"}},
		{"myid missing", zooCfg, "dataDir=" + dir + "\nserver.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889\n", []string{"zookeeper", zooCfg},
			[]string{zooCfg + ":", "myid"}},
		{"segment bytes", serverProps, "broker.id=0\nlog.segment.bytes=13\n", []string{"broker", serverProps},
			[]string{serverProps + ":2:", "log.segment.bytes=13", "from 14 to 2147483647"}},
		{"broker id", serverProps, "broker.id=-1\n", []string{"broker", serverProps},
			[]string{serverProps + ":1:", "broker.id=-1", "not supported"}},
		{"ssl.client.auth", serverProps, "broker.id=0\nssl.client.auth=need\n", []string{"broker", serverProps},
			[]string{serverProps + ":2:", "ssl.client.auth=need", "none, requested, required"}},
		{"SimpleAclAuthorizer", serverProps, "broker.id=0\nauthorizer.class.name=kafka.security.auth.SimpleAclAuthorizer\n", []string{"broker", serverProps},
			[]string{serverProps + ":2:", "authorizer.class.name=kafka.security.auth.SimpleAclAuthorizer", "kafka.security.authorizer.AclAuthorizer"}},
		{"SSL listener without keystore", serverProps, "listeners=SSL://127.0.0.1:9093\n", []string{"broker", serverProps},
			[]string{serverProps + ":1:", "listeners=SSL://127.0.0.1:9093", "ssl.keystore.location"}},
		{"SASL listener with Kafka's default GSSAPI", serverProps, "listeners=SASL_PLAINTEXT://127.0.0.1:9094\n", []string{"broker", serverProps},
			[]string{serverProps + ":", "sasl.enabled.mechanisms=GSSAPI", "not offered by zkafka"}},
		{"PLAIN without users", serverProps, "listeners=SASL_PLAINTEXT://127.0.0.1:9094\nsasl.enabled.mechanisms=PLAIN\n", []string{"broker", serverProps},
			[]string{serverProps + ":", "listener.name.sasl_plaintext.plain.sasl.jaas.config", "KAFKA_OPTS"}},
		{"bad JAAS value", serverProps, "listener.name.sasl_ssl.plain.sasl.jaas.config=PlainLoginModule sure user_a=\"pw\";\n", []string{"broker", serverProps},
			[]string{serverProps + ":1:", "listener.name.sasl_ssl.plain.sasl.jaas.config=[hidden]", "not a JAAS login module configuration"}},
		{"inter-broker SASL with Kafka's default GSSAPI", serverProps, "listeners=PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9094\n" +
			"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT\ninter.broker.listener.name=INTERNAL\nsasl.enabled.mechanisms=SCRAM-SHA-512\n", []string{"broker", serverProps},
			[]string{serverProps + ":", "sasl.mechanism.inter.broker.protocol=GSSAPI", "not GSSAPI"}},
		{"unknown cipher suite", serverProps, "listener.name.external.ssl.cipher.suites=TLS_MADE_UP\n", []string{"broker", serverProps},
			[]string{serverProps + ":1:", "listener.name.external.ssl.cipher.suites=TLS_MADE_UP", "unknown cipher suite"}},
		{"no such file", "", "", []string{"zookeeper", filepath.Join(dir, "nope.cfg")}, []string{"nope.cfg", "no such file"}},
		{"bad -zookeeper-addr", "", "", []string{"run", "-data", dir, "-zookeeper-addr", "127.0.0.1:99999"},
			[]string{"-zookeeper-addr", "127.0.0.1:99999"}},
		{"bad -kafka-addr", "", "", []string{"run", "-data", dir, "-kafka-addr", "localhost"}, []string{"-kafka-addr", "localhost"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.file != "" {
				if err := os.WriteFile(tc.file, []byte(tc.text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, stderr := runZkafka(t, tc.args...)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if code != 2 || len(lines) != 1 {
				t.Fatalf("exit %d, stderr %d lines:\n%s", code, len(lines), stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(lines[0], w) {
					t.Errorf("line %q lacks %q", lines[0], w)
				}
			}
		})
	}
}

// TestBadFlagValuesExit2: a flag value that is not allowed is a usage
// error (exit 2), not silently replaced by a default.
func TestBadFlagValuesExit2(t *testing.T) {
	for _, args := range [][]string{
		{"zookeeper", "-log-level", "loud", "zoo.cfg"},
		{"broker", "-log-format", "xml", "server.properties"},
		{"run", "-data", t.TempDir(), "extra-argument"},
		{"zookeeper", "a.cfg", "b.cfg"},
	} {
		if code, stderr := runZkafka(t, args...); code != 2 || !strings.Contains(stderr, "usage: zkafka") {
			t.Errorf("zkafka %v: exit %d, stderr:\n%s", args, code, stderr)
		}
	}
}
