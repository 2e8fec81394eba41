package zkgo

import (
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/quorum"
)

// setQuota writes what zkCli's `setquota` writes for path.
func setQuota(t *testing.T, c *zk.Conn, path, limits string) {
	t.Helper()
	must[string](t)(c.Create("/zookeeper/quota"+path, nil, 0, openACL))
	must[string](t)(c.Create("/zookeeper/quota"+path+"/zookeeper_limits", []byte(limits), 0, openACL))
	must[string](t)(c.Create("/zookeeper/quota"+path+"/zookeeper_stats", []byte("count=0,bytes=0"), 0, openACL))
}

func quotaStats(t *testing.T, c *zk.Conn, path string) string {
	t.Helper()
	data, _, err := c.Get("/zookeeper/quota" + path + "/zookeeper_stats")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestQuotaEnforced: with enforceQuota, a write over a hard quota fails with
// QuotaExceeded (-125; go-zookeeper has no name for it) and the stats stay.
func TestQuotaEnforced(t *testing.T) {
	ts := startServer(t, func(c *quorum.Config) { c.EnforceQuota = true })
	c, _ := ts.connect(5 * time.Second)
	must[string](t)(c.Create("/app", []byte("abc"), 0, openACL))
	setQuota(t, c, "/app", "count=-1,bytes=-1=;byteHardLimit=5;countHardLimit=2")
	if got := quotaStats(t, c, "/app"); got != "count=1,bytes=3" {
		t.Fatalf("stats after setquota %q", got)
	}
	must[string](t)(c.Create("/app/a", []byte("xy"), 0, openACL))
	_, err := c.Create("/app/b", nil, 0, openACL)
	if err == nil || !strings.Contains(err.Error(), "-125") {
		t.Fatalf("create over the hard count quota: %v, want error -125", err)
	}
	if _, err := c.Set("/app/a", []byte("xyz"), -1); err == nil || !strings.Contains(err.Error(), "-125") {
		t.Fatalf("setData over the hard bytes quota: %v, want error -125", err)
	}
	if got := quotaStats(t, c, "/app"); got != "count=2,bytes=5" {
		t.Fatalf("stats %q, want count=2,bytes=5", got)
	}
}

// TestQuotaNotEnforced: without enforceQuota the same writes succeed and
// are counted.
func TestQuotaNotEnforced(t *testing.T) {
	ts := startServer(t)
	c, _ := ts.connect(5 * time.Second)
	must[string](t)(c.Create("/app", []byte("abc"), 0, openACL))
	setQuota(t, c, "/app", "count=-1,bytes=-1=;byteHardLimit=5;countHardLimit=2")
	must[string](t)(c.Create("/app/a", []byte("xy"), 0, openACL))
	must[string](t)(c.Create("/app/b", nil, 0, openACL))
	if got := quotaStats(t, c, "/app"); got != "count=3,bytes=5" {
		t.Fatalf("stats %q, want count=3,bytes=5", got)
	}
}
