//go:build compat

package kafkaacl

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// kcat runs kcat (librdkafka) against e's SSL listener with who's client
// certificate, stdin in; it returns stdout, stderr and the exit error.
func (p *pki) kcat(t *testing.T, e *kafkaenv.Env, who, in string, args ...string) (string, string, error) {
	t.Helper()
	pem := keystoretest.WritePEM(t, p.dir, strings.NewReplacer(":", "_", ",", "_", "=", "_").Replace(who)+".pem", p.certs[who])
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{"-b", e.Addrs[1], "-X", "socket.timeout.ms=10000", "-X", "security.protocol=ssl",
		"-X", "ssl.ca.location=" + p.caPEM, "-X", "ssl.certificate.location=" + pem, "-X", "ssl.key.location=" + pem,
		"-X", "message.timeout.ms=10000"}, args...)
	cmd := exec.CommandContext(ctx, "kcat", args...)
	cmd.Stdin = strings.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// TestKcatDeniedThenAllowed: kcat as alice (her certificate's DN is her
// principal) is refused WRITE and READ on a topic with no ACL for her,
// then, once the admin grants them, produces and reads back.
func TestKcatDeniedThenAllowed(t *testing.T) {
	p := newPKI(t)
	e := kafkaenv.Start(t, p.secured())
	if _, err := p.admin(e, admin).CreateTopic(ctx(t), 1, 1, nil, "kcat-acl"); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := p.kcat(t, e, alice, "denied\n", "-P", "-t", "kcat-acl")
	if err == nil || !strings.Contains(strings.ToLower(stderr), "authorization failed") {
		t.Fatalf("kcat produce without an ACL: %v, stderr:\n%s", err, stderr)
	}
	createACLs(t, p.as(e, admin),
		aclOf(topicT, "kcat-", prefixed, alice, "*", kmsg.ACLOperationWrite, allowP),
		aclOf(topicT, "kcat-acl", literal, alice, "*", kmsg.ACLOperationRead, allowP))
	if _, stderr, err := p.kcat(t, e, alice, "k1:v1\nk2:v2\n", "-P", "-t", "kcat-acl", "-K:"); err != nil {
		t.Fatalf("kcat produce with WRITE: %v\n%s", err, stderr)
	}
	out, stderr, err := p.kcat(t, e, alice, "", "-C", "-t", "kcat-acl", "-e", "-o", "beginning", "-f", "%k:%s\n")
	if err != nil || out != "k1:v1\nk2:v2\n" {
		t.Fatalf("kcat consume with READ: %q, %v\n%s", out, err, stderr)
	}
	_, stderr, _ = p.kcat(t, e, bob, "", "-C", "-t", "kcat-acl", "-e", "-o", "beginning")
	if !strings.Contains(strings.ToLower(stderr), "authorization failed") {
		t.Fatalf("kcat consume as bob (no ACL): stderr:\n%s", stderr)
	}
}

// TestKafkaPythonACLs: kafka-python's admin client (CreateAcls,
// DescribeAcls and DeleteAcls at v0-1, literal and prefixed patterns) and
// its producer, refused and allowed as the ACLs change
// (kafka_python_check.py).
func TestKafkaPythonACLs(t *testing.T) {
	p := newPKI(t)
	e := kafkaenv.Start(t, p.secured())
	if _, err := p.admin(e, admin).CreateTopic(ctx(t), 1, 1, nil, "py-acl"); err != nil {
		t.Fatal(err)
	}
	pem := func(who string) string {
		return keystoretest.WritePEM(t, p.dir, strings.NewReplacer(":", "_", ",", "_", "=", "_").Replace(who)+".pem", p.certs[who])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", "kafka_python_check.py", e.Addrs[1], p.caPEM, pem(admin), pem(alice), "py-acl")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "OK") {
		t.Fatalf("kafka_python_check.py: %v\n%s", err, out)
	}
}
