//go:build compat

package ensemble

import (
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestSessionMovedApache runs TestSessionMoved's scenario against a 3-server
// Apache ZooKeeper ensemble: the reference for what zkafka does.
func TestSessionMovedApache(t *testing.T) {
	e := zkserver.NewApacheEnsemble(t, zkserver.EnsembleOptions{
		Options: zkserver.Options{TickTime: tickTime, StartTimeout: 60 * time.Second},
		Voters:  3,
	})
	e.StartAll()
	sessionMovedScenario(t, e)
}
