package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestRunControl: `zkafka run --brokers 2 --control addr` serves the
// cluster at the usual addresses (broker ids 0 and 1 on consecutive
// ports) and the fault API: GET /cluster lists them; a produce answered
// once with NOT_LEADER_OR_FOLLOWER through POST /intercept is retried by
// franz-go; SIGTERM exits 0.
func TestRunControl(t *testing.T) {
	dir := t.TempDir()
	base := freePorts(t, 2)
	control := freeAddr(t)
	kafka := net.JoinHostPort("127.0.0.1", strconv.Itoa(base))
	cmd := commandProcess([]string{"run", "--brokers", "2", "--data", filepath.Join(dir, "data"),
		"--zookeeper-addr", freeAddr(t), "--kafka-addr", kafka, "--control", control})
	logf, err := os.Create(filepath.Join(dir, "child.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("child log:\n%s", b)
		}
	})
	var st struct {
		Bootstrap string
		Brokers   []struct {
			ID      int32
			Running bool
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + control + "/cluster")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
		}
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /cluster: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	wantSeeds := kafka + "," + net.JoinHostPort("127.0.0.1", strconv.Itoa(base+1))
	if st.Bootstrap != wantSeeds || len(st.Brokers) != 2 || st.Brokers[0].ID != 0 || !st.Brokers[1].Running {
		t.Fatalf("GET /cluster: %+v, want brokers 0 and 1 at %s", st, wantSeeds)
	}
	resp, err := http.Post("http://"+control+"/intercept", "application/json",
		strings.NewReader(`{"api_key": 0, "error_code": 6, "count": 1}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /intercept: %v %v", resp, err)
	}
	resp.Body.Close()
	c, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(st.Bootstrap, ",")...), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("produce through an injected error: %v", err)
	}
	var rules []struct{ Hits int }
	resp, err = http.Get("http://" + control + "/intercept")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&rules)
	resp.Body.Close()
	if len(rules) != 1 || rules[0].Hits != 1 {
		t.Fatalf("GET /intercept: %+v, want one rule that acted once", rules)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}
