//go:build compat

package zkgo

import (
	"testing"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestApacheSetWatchesReplyXid proves checkSetWatchesReplyXid against Apache
// ZooKeeper 3.8, then runs it against the zkafka binary.
func TestApacheSetWatchesReplyXid(t *testing.T) {
	t.Run("apache", func(t *testing.T) {
		checkSetWatchesReplyXid(t, zkserver.StartApache(t, zkserver.Options{}).Addr())
	})
	t.Run("zkafka", func(t *testing.T) {
		checkSetWatchesReplyXid(t, zkserver.StartZkafka(t, zkserver.Options{}).Addr())
	})
}
