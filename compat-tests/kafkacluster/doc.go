// Package kafkacluster runs real clients against a 3-broker zkafka cluster
// of processes (compat-tests/internal/kcluster) with topics of replication
// factor 3:
//
//   - TestClients (build tag compat; Debian's kcat,
//     python3-kafka and python3-confluent-kafka): kcat -L, kafka-python and
//     confluent-kafka admin, metadata (three brokers, three replicas all in
//     the ISR), acks=all produce and consume back at the acknowledged
//     offsets;
//   - TestKgoIntegration (build tag compat): franz-go's own kgo
//     integration tests from the module cache (go test
//     github.com/twmb/franz-go/pkg/kgo with KGO_SEEDS and KGO_TEST_RF=3).
//
// compat-part.sh runs them from make compat. ZKAFKA_CLUSTER_RF=1 runs the same
// checks with unreplicated topics (min.insync.replicas 1), which checks
// the harness itself without replication.
//
//	go test -tags compat -count=1 -run TestClients ./compat-tests/kafkacluster/
//	go test -tags compat -count=1 -run TestKgoIntegration -timeout 15m ./compat-tests/kafkacluster/
package kafkacluster
