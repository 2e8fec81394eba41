package zkafkatest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/zkafkatest"
)

// call sends method path with body to the control API and decodes the
// JSON answer into out (if not nil); it returns the status.
func call(t *testing.T, srv *httptest.Server, method, path, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	must(t, err)
	resp, err := srv.Client().Do(req)
	must(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	must(t, err)
	if resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s %s: content type %q", method, path, resp.Header.Get("Content-Type"))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

// TestControlAPI drives the faults over HTTP: an injected
// NOT_LEADER_OR_FOLLOWER that franz-go retries, a kill and start of the
// broker, a session expiry a go-zookeeper client sees, and the errors.
func TestControlAPI(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Topic("t", 1, 1), zkafkatest.BrokerSessionTimeout(time.Second))
	srv := httptest.NewServer(zkafkatest.ControlHandler(cl))
	defer srv.Close()

	var st zkafkatest.ClusterState
	if call(t, srv, "GET", "/cluster", "", &st) != 200 || st.Bootstrap != cl.Bootstrap() ||
		len(st.Brokers) != 1 || !st.Brokers[0].Running || st.Controller != 1 || st.ZooKeeper != cl.ZooKeeper() {
		t.Fatalf("GET /cluster: %+v", st)
	}

	var added struct{ ID int }
	rule := fmt.Sprintf(`{"api_key": 0, "error_code": %d, "count": 1}`, kerr.NotLeaderForPartition.Code)
	if call(t, srv, "POST", "/intercept", rule, &added) != 200 || added.ID == 0 {
		t.Fatalf("POST /intercept: %+v", added)
	}
	produce(t, client(t, cl), "t", "x")
	var rules []struct {
		ID, Hits int
		Kind     string
	}
	call(t, srv, "GET", "/intercept", "", &rules)
	if len(rules) != 1 || rules[0].Hits != 1 || rules[0].Kind != "kafka" {
		t.Fatalf("GET /intercept: %+v", rules)
	}
	if call(t, srv, "DELETE", fmt.Sprint("/intercept/", added.ID), "", nil) != 200 {
		t.Fatal("DELETE /intercept")
	}

	if code := call(t, srv, "POST", "/brokers/1/kill", "", nil); code != 200 {
		t.Fatalf("kill: %d", code)
	}
	call(t, srv, "GET", "/cluster", "", &st)
	if st.Brokers[0].Running {
		t.Fatal("broker 1 running after a kill")
	}
	if code := call(t, srv, "POST", "/brokers/1/start", "", nil); code != 200 {
		t.Fatalf("start: %d", code)
	}
	produce(t, client(t, cl), "t", "y")

	conn, events := zkSession(t, cl, 10*time.Second)
	if code := call(t, srv, "POST", fmt.Sprintf("/zookeeper/sessions/0x%x/expire", conn.SessionID()), "", nil); code != 200 {
		t.Fatalf("expire: %d", code)
	}
	waitState(t, events, zk.StateExpired)

	var e struct{ Error string }
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/brokers/9/kill", "", 404},
		{"POST", "/brokers/1/explode", "", 404},
		{"POST", "/brokers/1/cut", `{"peer": "nobody"}`, 400},
		{"POST", "/brokers/1/cut", `{"peer": "broker-1"}`, 409},
		{"POST", "/intercept", `{"api_key": "produce"}`, 400},
		{"POST", "/intercept", `{"count": -1}`, 400},
		{"POST", "/zookeeper/intercept", `{"delay_ms": -5}`, 400},
		{"POST", "/zookeeper/intercept", `{"op": 1, "bogus": 1}`, 400},
		{"POST", "/zookeeper/sessions/xyz/expire", "", 400},
		{"POST", "/zookeeper/sessions/0x7777/expire", "", 409},
		{"POST", "/brokers/1/start", "", 409}, // running
		{"DELETE", "/intercept/99", "", 404},
	} {
		e.Error = ""
		if got := call(t, srv, c.method, c.path, c.body, &e); got != c.status || e.Error == "" {
			t.Errorf("%s %s %s: %d %q, want %d and an error", c.method, c.path, c.body, got, e.Error, c.status)
		}
	}
}

// TestControlCutAndPause: cut and pause over HTTP act on the member's
// links, as GET /cluster reports.
func TestControlCutAndPause(t *testing.T) {
	cl := zkafkatest.StartCluster(t)
	srv := httptest.NewServer(zkafkatest.ControlHandler(cl))
	defer srv.Close()
	state := func(from, to string) string {
		var st zkafkatest.ClusterState
		call(t, srv, "GET", "/cluster", "", &st)
		for _, l := range st.Links {
			if l.From == from && l.To == to {
				return l.State
			}
		}
		t.Fatalf("no link %s → %s in %+v", from, to, st.Links)
		return ""
	}
	call(t, srv, "POST", "/brokers/1/cut", "", nil)
	if s := state("clients", "broker-1"); s != "cut" {
		t.Fatalf("clients → broker-1 %s after cut", s)
	}
	call(t, srv, "POST", "/zookeeper/1/cut", `{"peer": "broker-1"}`, nil)
	if s := state("broker-1", "zookeeper-1"); s != "cut" {
		t.Fatalf("broker-1 → zookeeper-1 %s after cut", s)
	}
	call(t, srv, "POST", "/brokers/1/cut", `{"peer": "brokers"}`, nil)
	if s := state("brokers", "broker-1"); s != "cut" {
		t.Fatalf("brokers → broker-1 %s after cut", s)
	}
	call(t, srv, "POST", "/heal", "", nil)
	call(t, srv, "POST", "/zookeeper/1/pause", "", nil)
	if s := state("clients", "zookeeper-1"); s != "paused" {
		t.Fatalf("clients → zookeeper-1 %s after pause", s)
	}
	for _, from := range []string{"clients", "brokers"} {
		if s := state(from, "broker-1"); s != "open" {
			t.Fatalf("%s → broker-1 %s after heal", from, s)
		}
	}
	call(t, srv, "POST", "/zookeeper/1/resume", "", nil)
	if s := state("broker-1", "zookeeper-1"); s != "open" {
		t.Fatalf("broker-1 → zookeeper-1 %s after resume", s)
	}
}

// TestControlCutBrokerPair: {"peer": "broker-2"} on broker 1 cuts the two
// links between them, and only those: the other brokers' links to broker
// 1 and its clients' stay open.
func TestControlCutBrokerPair(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Brokers(3))
	srv := httptest.NewServer(zkafkatest.ControlHandler(cl))
	defer srv.Close()
	call(t, srv, "POST", "/brokers/1/cut", `{"peer": "broker-2"}`, nil)
	var st zkafkatest.ClusterState
	call(t, srv, "GET", "/cluster", "", &st)
	cut := map[string]bool{}
	for _, l := range st.Links {
		if l.State == "cut" {
			cut[l.From+" → "+l.To] = true
		}
	}
	if len(cut) != 2 || !cut["broker-1 → broker-2"] || !cut["broker-2 → broker-1"] {
		t.Fatalf("cut links %v, want broker-1 → broker-2 and back", cut)
	}
}
