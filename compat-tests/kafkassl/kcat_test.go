//go:build compat

package kafkassl

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

// kcatSSL runs kcat (librdkafka) against addr over SSL, trusting ca, with
// stdin in, and returns its output.
func kcatSSL(t *testing.T, addr, ca, in string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{"-b", addr, "-X", "socket.timeout.ms=10000", "-X", "security.protocol=ssl",
		"-X", "ssl.ca.location=" + ca}, args...)
	cmd := exec.CommandContext(ctx, "kcat", args...)
	cmd.Stdin = strings.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

// TestKcatSSL produces 500 records with kcat over an SSL listener (PEM
// keystore, the CA given to librdkafka as ssl.ca.location, the host name
// checked) and reads them back with kcat over SSL.
func TestKcatSSL(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	e := sslBroker(t, p, []string{"SSL://127.0.0.1:0"}, "PEM", "none")
	var in strings.Builder
	for i := range 500 {
		fmt.Fprintf(&in, "k%d:v%d\n", i, i)
	}
	kcatSSL(t, e.Addr, p.CAPEM, in.String(), "-P", "-t", "kcat-ssl", "-K:")
	out := kcatSSL(t, e.Addr, p.CAPEM, "", "-C", "-t", "kcat-ssl", "-e", "-o", "beginning", "-f", "%k:%s\n")
	if out != in.String() {
		t.Fatalf("kcat read back %d bytes, want the %d produced:\n%.300s", len(out), in.Len(), out)
	}
}
