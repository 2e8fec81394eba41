//go:build compat

package kafkacoord

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestKcatGroupAcrossMove: kcat -G (librdkafka's balanced consumer)
// reads a topic in a group; the broker coordinating the group is
// stopped; kcat finds the new coordinator, reads what is produced after,
// and its commits land there (the group's committed offsets reach the
// end of every partition).
func TestKcatGroupAcrossMove(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Fatal("kcat is not installed (compat-part.sh installs it)")
	}
	const n = 60
	cl := kafkaenv.StartCluster(t, 3, settings(0))
	kc := client(t, cl)
	ctx := ctxT(t)
	adm := kadm.NewClient(kc)
	if r, err := adm.CreateTopic(ctx, 6, 3, nil, "kcat-moves"); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	produce := func(tag string) {
		for i := 0; i < n; i++ {
			v := fmt.Sprintf("%s-%d", tag, i)
			if err := kc.ProduceSync(ctx, &kgo.Record{Topic: "kcat-moves", Key: []byte(v), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce("before")
	var seeds []string
	for _, e := range cl.Brokers {
		seeds = append(seeds, e.Addr)
	}
	kctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(kctx, "kcat", "-b", strings.Join(seeds, ","), "-G", "kcat-group", "kcat-moves",
		"-u", "-X", "auto.offset.reset=earliest", "-f", "%s\n", "-q", "-X", "auto.commit.interval.ms=200",
		"-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=500")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kcat stderr: %s", stderr.String())
		}
	})
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	var mu sync.Mutex
	seen := map[string]int{}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			mu.Lock()
			seen[sc.Text()]++
			mu.Unlock()
		}
	}()
	read := func(want int) {
		t.Helper()
		waitFor(t, 90*time.Second, fmt.Sprintf("kcat read %d records", want), func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen) >= want
		})
	}
	read(n)
	coord := coordinatorOf(t, kc, "kcat-group")
	cl.Broker(coord).Stop()
	waitFor(t, 60*time.Second, "the coordinator to move", func() bool { return coordinatorOf(t, kc, "kcat-group") != coord })
	produce("after")
	read(2 * n)
	ends, err := adm.ListEndOffsets(ctx, "kcat-moves")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "kcat's commits at the end of every partition", func() bool {
		offs, err := adm.FetchOffsets(ctx, "kcat-group")
		if err != nil {
			return false
		}
		ok := true
		ends.Each(func(e kadm.ListedOffset) {
			if o, found := offs.Lookup(e.Topic, e.Partition); !found || o.At != e.Offset {
				ok = false
			}
		})
		return ok
	})
	mu.Lock()
	defer mu.Unlock()
	for _, tag := range []string{"before", "after"} {
		for i := 0; i < n; i++ {
			if v := fmt.Sprintf("%s-%d", tag, i); seen[v] == 0 {
				t.Errorf("kcat never read %s", v)
			}
		}
	}
}
