package raftnode

import (
	"fmt"
	"testing"
	"time"
)

// TestHandOverWaitsForTheHighestID: the voter with the highest id
// acknowledges appends later than the others (its acks arrive 4 ticks
// late); whoever wins the first election, leadership ends with it, as
// ZooKeeper's election ends with the highest myid. Handing over to the
// first voter whose log matched left the middle id leading: as a follower
// it had heard nothing from the highest, so it never handed over again.
func TestHandOverWaitsForTheHighestID(t *testing.T) {
	for round := range 6 {
		t.Run(fmt.Sprint("round", round), func(t *testing.T) {
			c := newCluster(t, voters(1, 2, 3), func(cfg *Config) { cfg.HandOver = true })
			c.net.mu.Lock()
			c.net.slowAck[3] = 4 * c.cfgs[3].TickInterval
			c.net.mu.Unlock()
			first := c.leader(1, 2, 3)
			waitFor(t, 5*time.Second, fmt.Sprintf("node 3 leading (first elected: %d)", first), func() bool {
				for _, id := range []uint64{1, 2, 3} {
					if c.nodes[id].Status().Leader != 3 {
						return false
					}
				}
				return true
			})
			t.Logf("first elected %d, node 3 leads", first)
		})
	}
}
