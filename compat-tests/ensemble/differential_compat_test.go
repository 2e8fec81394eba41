//go:build compat

package ensemble

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/differential"
	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestEnsembleApacheVsZkafka repeats the differential run against a 3-server
// Apache ZooKeeper ensemble and a 3-server zkafka ensemble, each session
// connected through the whole connect string (go-zookeeper shuffles it, so
// sessions spread over the servers).
func TestEnsembleApacheVsZkafka(t *testing.T) {
	opts := zkserver.EnsembleOptions{
		Options: zkserver.Options{ExtendedTypes: true, ContainerCheckInterval: time.Hour, StartTimeout: 60 * time.Second},
		Voters:  3,
	}
	a := zkserver.NewApacheEnsemble(t, opts)
	b := zkserver.NewZkafkaEnsemble(t, opts)
	a.StartAll()
	b.StartAll()
	ops := differential.Generate(20261129, 2000)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cfg := differential.Config{SyncFlush: true, NormalizeData: normalizePorts}
	ta, tb := differential.RunPair(ctx, "apache-ensemble", a.ConnectString(), "zkafka-ensemble", b.ConnectString(), ops, cfg, cfg)
	t.Logf("%s: %d records in %v; %s: %d records in %v", ta.Name, len(ta.Records), ta.Duration, tb.Name, len(tb.Records), tb.Duration)
	if diffs := differential.Compare(ta, tb, 10); len(diffs) > 0 {
		t.Fatalf("zkafka's ensemble differs from Apache ZooKeeper's:\n%s", differential.Format(ta, tb, diffs))
	}
	if ta.Err != nil {
		t.Fatalf("the Apache run stopped: %v", ta.Err)
	}
}

var portNumber = regexp.MustCompile(`:[0-9]+`)

// normalizePorts hides the port numbers of /zookeeper/config: the two
// ensembles run on different ports, everything else in the text must match.
func normalizePorts(path string, data []byte) []byte {
	if path != "/zookeeper/config" {
		return data
	}
	return portNumber.ReplaceAll(data, []byte(":P"))
}
