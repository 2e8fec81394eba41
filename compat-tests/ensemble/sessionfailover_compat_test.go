//go:build compat

package ensemble

import (
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestSessionSurvivesLeaderFailoverApache runs the kill -9 rounds of
// TestSessionSurvivesLeaderFailover against an Apache ZooKeeper 3.8
// ensemble: the reference keeps the session, its ephemeral and its watches
// through kills of its leader too. Not the SIGSTOP rounds: Apache's
// followers notice a stopped leader only after syncLimit ticks, by then
// go-zookeeper has moved on and landed on the stopped server, whose
// kernel accepts the connection, and it waits ten times its receive
// timeout there for a ConnectResponse, past the session's fresh lease on
// the new leader, which then rightly expires it.
func TestSessionSurvivesLeaderFailoverApache(t *testing.T) {
	tick := failoverTick(t)
	e := zkserver.NewApacheEnsemble(t, zkserver.EnsembleOptions{
		Options: zkserver.Options{TickTime: tick, StartTimeout: 60 * time.Second},
		Voters:  3,
	})
	sessionFailoverScenario(t, e, tick, 6, 0)
}
