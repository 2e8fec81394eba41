//go:build compat

package testcontrol

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/zkafkatest"
)

// run runs name with args (and stdin in) for at most 60 s and returns its
// output.
func run(t *testing.T, in, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s%s", name, args, err, out.String(), errb.String())
	}
	return out.String()
}

// post sends body to the control API and decodes the answer into out.
func post(t *testing.T, url, body string, out any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s %s: %s", url, body, resp.Status)
	}
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
}

// TestKcatRetriesInjectedError: a rule added over HTTP answers kcat's
// first two produce requests with NOT_LEADER_OR_FOLLOWER (6); librdkafka
// retries and its record lands once.
func TestKcatRetriesInjectedError(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Topic("t", 1, 1))
	srv := httptest.NewServer(zkafkatest.ControlHandler(cl))
	defer srv.Close()
	post(t, srv.URL+"/intercept", `{"api_key": 0, "error_code": 6, "count": 2}`, nil)
	run(t, "once\n", "kcat", "-b", cl.Bootstrap(), "-P", "-t", "t", "-X", "retry.backoff.ms=50")
	out := run(t, "", "kcat", "-b", cl.Bootstrap(), "-C", "-t", "t", "-e", "-o", "beginning", "-f", "%s\n")
	if out != "once\n" {
		t.Fatalf("kcat read %q, want the record once", out)
	}
	resp, err := http.Get(srv.URL + "/intercept")
	if err != nil {
		t.Fatal(err)
	}
	var rules []struct{ Hits int }
	json.NewDecoder(resp.Body).Decode(&rules)
	resp.Body.Close()
	if len(rules) != 1 || rules[0].Hits != 2 {
		t.Fatalf("GET /intercept: %+v, want the rule to have answered 2 produce requests", rules)
	}
}

// TestKazooSeesExpiry: kazoo_expire.py creates an ephemeral, asks the
// control API to expire its own session, and sees the session LOST and
// the ephemeral gone once it reconnects.
func TestKazooSeesExpiry(t *testing.T) {
	cl := zkafkatest.StartZooKeeper(t)
	srv := httptest.NewServer(zkafkatest.ControlHandler(cl))
	defer srv.Close()
	out := run(t, "", "/usr/bin/python3", "kazoo_expire.py", cl.ZooKeeper(), srv.URL)
	if !strings.Contains(out, "LOST\n") || !strings.Contains(out, "ephemeral gone\n") {
		t.Fatalf("kazoo_expire.py said:\n%s", out)
	}
}
