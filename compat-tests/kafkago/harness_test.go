package kafkago

import (
	"context"
	"testing"
	"time"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// The ZooKeeper, brokers and clients are kafkaenv's; this file starts
// the brokers the tests want.

func TestMain(m *testing.M) { kafkaenv.Main(m) }

// env is one broker on its own chroot and data directory.
type env = kafkaenv.Env

// startBroker starts a broker; mod adjusts its config.
func startBroker(t testing.TB, mod ...func(*broker.Config)) *env {
	t.Helper()
	return kafkaenv.Start(t, kafkaenv.Configure(mod...))
}

// ctxT times out after 30 s or at the end of the test.
func ctxT(t testing.TB) context.Context { return kafkaenv.Context(t, 30*time.Second) }
