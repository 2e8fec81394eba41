//go:build compat

package kafkasasl

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// run runs a client process for at most 90 s and returns its output,
// failing t if it fails.
func run(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s\n%s", name, args, err, out.String(), errb.String())
	}
	return out.String()
}

// TestKcatSASL: kcat (librdkafka) produces and reads back records over
// SASL_SSL with SCRAM-SHA-512 (a user made with kadm) and with PLAIN, and
// over SASL_PLAINTEXT with SCRAM-SHA-256.
func TestKcatSASL(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	e := saslBroker(t, p)
	addSCRAM(t, e, "kc512", "kc512-pw", "SCRAM-SHA-512")
	addSCRAM(t, e, "kc256", "kc256-pw", "SCRAM-SHA-256")
	for _, tc := range []struct{ addr, proto, mech, user, pass string }{
		{saslSSLAddr(e), "SASL_SSL", "SCRAM-SHA-512", "kc512", "kc512-pw"},
		{saslSSLAddr(e), "SASL_SSL", "PLAIN", "alice", "alice-secret"},
		{saslAddr(e), "SASL_PLAINTEXT", "SCRAM-SHA-256", "kc256", "kc256-pw"},
	} {
		t.Run(tc.proto+"-"+tc.mech, func(t *testing.T) {
			args := []string{"-b", tc.addr, "-X", "socket.timeout.ms=10000", "-X", "security.protocol=" + tc.proto,
				"-X", "sasl.mechanisms=" + tc.mech, "-X", "sasl.username=" + tc.user, "-X", "sasl.password=" + tc.pass}
			if tc.proto == "SASL_SSL" {
				args = append(args, "-X", "ssl.ca.location="+p.CAPEM)
			}
			topic := strings.ToLower("kcat-" + tc.proto + "-" + tc.mech)
			var in strings.Builder
			for i := range 200 {
				fmt.Fprintf(&in, "k%d:v%d\n", i, i)
			}
			run(t, in.String(), "kcat", append(args, "-P", "-t", topic, "-K:")...)
			out := run(t, "", "kcat", append(args, "-C", "-t", topic, "-e", "-o", "beginning", "-f", "%k:%s\n")...)
			if out != in.String() {
				t.Fatalf("kcat read back %d bytes, want the %d produced:\n%.300s", len(out), in.Len(), out)
			}
		})
	}
}

// TestKcatWrongPassword: librdkafka with a wrong SCRAM password gets the
// broker's authentication failure.
func TestKcatWrongPassword(t *testing.T) {
	e := saslBroker(t, nil)
	addSCRAM(t, e, "kcbad", "right", "SCRAM-SHA-512")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "kcat", "-b", saslAddr(e), "-X", "security.protocol=SASL_PLAINTEXT",
		"-X", "sasl.mechanisms=SCRAM-SHA-512", "-X", "sasl.username=kcbad", "-X", "sasl.password=wrong", "-L", "-m", "10").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Authentication failed") {
		t.Fatalf("kcat with a wrong password: %v\n%s", err, out)
	}
}

// TestConfluentKafkaSASL: confluent-kafka's producer (idempotent, with
// delivery reports) and consumer group over SASL_SSL with SCRAM-SHA-512
// and PLAIN.
func TestConfluentKafkaSASL(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	e := saslBroker(t, p)
	addSCRAM(t, e, "ck", "ck-pw", "SCRAM-SHA-512")
	for _, tc := range []struct{ mech, user, pass string }{{"SCRAM-SHA-512", "ck", "ck-pw"}, {"PLAIN", "admin", "admin-secret"}} {
		t.Run(tc.mech, func(t *testing.T) {
			out := run(t, "", "/usr/bin/python3", "testdata/confluent_sasl.py", saslSSLAddr(e), "SASL_SSL", tc.mech, tc.user, tc.pass,
				p.CAPEM, strings.ToLower("ck-"+tc.mech), "100")
			if !strings.HasPrefix(out, "ok 100") {
				t.Fatalf("confluent-kafka: %s", out)
			}
		})
	}
}

// TestKafkaPythonSASL: kafka-python (SaslHandshake v0 and raw tokens)
// over SASL_PLAINTEXT with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512; a wrong
// password is refused.
func TestKafkaPythonSASL(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	e := saslBroker(t, p)
	addSCRAM(t, e, "kp256", "kp256-pw", "SCRAM-SHA-256")
	addSCRAM(t, e, "kp512", "kp512-pw", "SCRAM-SHA-512")
	for _, tc := range []struct {
		mech, user, pass string
		ssl              bool
	}{
		{"PLAIN", "alice", "alice-secret", false}, {"SCRAM-SHA-256", "kp256", "kp256-pw", false}, {"SCRAM-SHA-512", "kp512", "kp512-pw", false},
		{"SCRAM-SHA-256", "kp256", "bad", false}, {"PLAIN", "alice", "bad", false},
		{"SCRAM-SHA-512", "kp512", "kp512-pw", true}, {"PLAIN", "alice", "alice-secret", true},
	} {
		name, args := tc.mech+"-"+tc.pass, []string{"testdata/kafka_python_sasl.py", saslAddr(e), tc.mech, tc.user, tc.pass,
			strings.ToLower("kp-" + tc.mech), "50"}
		if tc.ssl {
			name, args = "SASL_SSL-"+name, append(args, p.CAPEM)
			args[1], args[5] = saslSSLAddr(e), args[5]+"-ssl"
		}
		t.Run(name, func(t *testing.T) {
			out := run(t, "", "/usr/bin/python3", args...)
			want := "ok 50"
			if tc.pass == "bad" {
				want = "refused"
			}
			if !strings.HasPrefix(out, want) {
				t.Fatalf("kafka-python: %s", out)
			}
		})
	}
}
