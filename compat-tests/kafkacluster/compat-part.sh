# compat-tests/kafkacluster/compat-part.sh — sourced by compat-tests/compat.sh
# (which provides check, result, log and GOTEST).
#
# A 3-broker zkafka cluster of processes with topics of replication factor 3
# (compat-tests/internal/kcluster), against:
#
#   kcat, kafka-python, confluent-kafka   TestClients: metadata (3 brokers,
#                         3 replicas all in the ISR), acks=all produce,
#                         consume back at the acknowledged offsets
#   franz-go kgo          TestKgoIntegration: franz-go's own pkg/kgo
#                         integration tests with KGO_TEST_RF=3
#   fault table           compat-tests/kafkafaults (kill -9, SIGSTOP,
#                         partition, rolling restart) on Apache ZooKeeper 3.8
#                         (ZKAFKA_TEST_ZK), 3 cycles a fault; make test runs
#                         it on zkafka's ZooKeeper with 10
CHECK_TIMEOUT=600 check cluster-clients zkafka kafkacluster-clients \
	go test -tags compat -count=1 -timeout 9m -run '^TestClients$' ./compat-tests/kafkacluster/
CHECK_TIMEOUT=900 check kgo-cluster zkafka kafkacluster-kgo \
	go test -tags compat -count=1 -timeout 14m -run '^TestKgoIntegration$' ./compat-tests/kafkacluster/
if start_server apache kafkacluster-apache-zk; then
	ZKAFKA_FAULT_CYCLES=${ZKAFKA_FAULT_CYCLES:-3} ZKAFKA_TEST_ZK=127.0.0.1:$PORT CHECK_TIMEOUT=1500 check fault-table apache kafkafaults-apache \
		go test -count=1 -timeout 24m -v -run '^TestFaultTable$' ./compat-tests/kafkafaults/
	grep -h '^fault ' "$WORK/kafkafaults-apache.log" 2>/dev/null | sed 's/^/    /' || true
else
	result FAIL fault-table apache "Apache ZooKeeper did not start"
fi
