package replication

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestProducerIDsUniqueAcrossBrokers: InitProducerId racing on three
// brokers (several clients each, started together) never hands out one id
// twice: each broker takes blocks of 1000 from /latest_producer_id_block
// with a versioned write (Kafka's ZooKeeper ProducerIdManager, before
// AllocateProducerIds), and more than one block per broker is needed, so
// the brokers race for the znode. The znode keeps Kafka's JSON.
func TestProducerIDsUniqueAcrossBrokers(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3)
	const clientsPerBroker, perClient = 4, 400 // 1600 ids per broker: two blocks or more each
	var (
		mu    sync.Mutex
		owner = map[int64]int32{}
		dups  []int64
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	errs := make(chan error, 3*clientsPerBroker)
	for _, e := range cl.Brokers {
		for range clientsPerBroker {
			kc := e.Client(kgo.SeedBrokers(e.Addr))
			id := e.Config.BrokerID
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for range perClient {
					req := kmsg.NewPtrInitProducerIDRequest()
					req.ProducerID, req.ProducerEpoch = -1, -1
					resp, err := req.RequestWith(ctxT(t), kc)
					if err == nil && resp.ErrorCode != 0 {
						err = kerr.ErrorForCode(resp.ErrorCode)
					}
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					if _, ok := owner[resp.ProducerID]; ok {
						dups = append(dups, resp.ProducerID)
					}
					owner[resp.ProducerID] = id
					mu.Unlock()
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("InitProducerId: %v", err)
	}
	if len(dups) > 0 {
		t.Fatalf("%d producer ids handed out twice, e.g. %v", len(dups), dups[:min(len(dups), 5)])
	}
	if want := 3 * clientsPerBroker * perClient; len(owner) != want {
		t.Fatalf("%d distinct ids, want %d", len(owner), want)
	}
	data, _, err := cl.Brokers[0].ZK().Get(cl.Brokers[0].Path("/latest_producer_id_block"))
	if err != nil {
		t.Fatal(err)
	}
	var z struct {
		Version    int    `json:"version"`
		Broker     int32  `json:"broker"`
		BlockStart string `json:"block_start"`
		BlockEnd   string `json:"block_end"`
	}
	if err := json.Unmarshal(data, &z); err != nil || z.Version != 1 || z.Broker < 1 || z.Broker > 3 || z.BlockStart == "" || z.BlockEnd == "" {
		t.Fatalf("/latest_producer_id_block %s: %+v %v", data, z, err)
	}
	var maxID int64
	for id := range owner {
		maxID = max(maxID, id)
	}
	var end int64
	if err := json.Unmarshal([]byte(z.BlockEnd), &end); err != nil || maxID > end {
		t.Fatalf("an id %d beyond the last block's end %s", maxID, z.BlockEnd)
	}
}
