package broker

import (
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The epochs that fence the controller's requests (LeaderAndIsr,
// UpdateMetadata, StopReplica), as Kafka's KafkaApis and ReplicaManager
// check them:
//
//   - broker_epoch is the czxid of this broker's /brokers/ids/{id}
//     (KIP-380). A request naming an older one was meant for this
//     broker's previous registration (before a bounce or a session
//     expiry): STALE_BROKER_EPOCH. A newer one is accepted (the controller
//     may learn of a re-registration before the broker does), and -1
//     (a controller that predates KIP-380) is never stale.
//   - controller_epoch below the newest this broker has seen comes from a
//     deposed controller: STALE_CONTROLLER_EPOCH. Otherwise it becomes the
//     newest seen.

// controlEpochs holds the broker's side of both epochs.
type controlEpochs struct {
	// broker is this broker's epoch, set when it registers (0 before).
	broker atomic.Int64
	// controller is the newest controller_epoch seen in a request.
	// Invariant: it never decreases.
	controller atomic.Int32
}

// check returns the error code for a control request with these epochs
// (0 when it is current) and records controllerEpoch as seen.
func (e *controlEpochs) check(controllerEpoch int32, brokerEpoch int64) int16 {
	if brokerEpoch != -1 && brokerEpoch < e.broker.Load() {
		return kerr.StaleBrokerEpoch.Code
	}
	for {
		seen := e.controller.Load()
		if controllerEpoch < seen {
			return kerr.StaleControllerEpoch.Code
		}
		if controllerEpoch == seen || e.controller.CompareAndSwap(seen, controllerEpoch) {
			return 0
		}
	}
}
