//go:build compat

package kafkaquota

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/zkafkatest"
)

// TestKafkaPythonProduceQuota: kafka-python's producer (Produce v3-v7, no
// KIP-219 back-off of its own) under producer_byte_rate=1 MiB/s set with
// kadm: the muted connection holds it near the quota, its metrics show the
// throttle times the responses carried, and every record it was acked for
// is in the log.
func TestKafkaPythonProduceQuota(t *testing.T) {
	cl := zkafkatest.StartCluster(t, append(quotaWindow, zkafkatest.Topic("t", 1, 1))...)
	ctx := ctxT(t, 3*time.Minute)
	raw, _ := client(t, cl, "admin-raw")
	setQuota(t, ctx, raw, 1, clientEntity("py-slow"), "producer_byte_rate", mib, false)
	_, file, _, _ := runtime.Caller(0)
	out, err := exec.CommandContext(ctx, "/usr/bin/python3", filepath.Join(filepath.Dir(file), "kafka_python_produce.py"),
		cl.Bootstrap(), "t", "py-slow", "5").CombinedOutput()
	if err != nil {
		t.Fatalf("kafka-python: %v\n%s", err, out)
	}
	var n int64
	var rate, throttle float64
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if _, err := fmt.Sscan(lines[len(lines)-1], &n, &rate, &throttle); err != nil {
		t.Fatalf("kafka-python printed %q: %v", out, err)
	}
	t.Logf("kafka-python at a 1 MiB/s quota: %d records, %.2f MiB/s, throttle max %.0f ms", n, rate/mib, throttle)
	if rate > 2*mib {
		t.Errorf("kafka-python produced %.2f MiB/s, want under 2 MiB/s", rate/mib)
	}
	if throttle <= 0 {
		t.Error("kafka-python saw no throttle time")
	}
	ends, err := admin(t, cl).ListEndOffsets(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if end, _ := ends.Lookup("t", 0); end.Offset != n {
		t.Errorf("log end %d, want the %d records kafka-python was acked for", end.Offset, n)
	}
}
