package kafkatool

import (
	"testing"

	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// startEnv starts a broker on its own chroot.
func startEnv(t *testing.T) *kafkaenv.Env { return kafkaenv.Start(t) }
