package kafkatool

import (
	"testing"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// startEnv starts a broker on its own chroot, with no initial rebalance
// delay so that group tests do not wait 3 s for each join.
func startEnv(t *testing.T) *kafkaenv.Env {
	return kafkaenv.Start(t, kafkaenv.Configure(func(c *broker.Config) { c.Groups.InitialRebalanceDelay = 0 }))
}
