# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST),
# after kafka-clients/compat-part.sh has installed kcat and
# python3-confluent-kafka: kcat (librdkafka) reading with -X
# isolation.level=read_committed sees committed transactions only and stops
# at the last stable offset; confluent-kafka's transactional producer
# commits and aborts, and its read_committed consumer reads the committed
# records only (confluent_txn_check.py). (The franz-go transaction tests of
# this package run in make test.)
if command -v kcat >/dev/null; then
	check kcat read_committed kcat-read-committed "${GOTEST[@]}" -run '^TestKcatReadCommitted$' ./compat-tests/kafkatxnpart/
else
	result FAIL kcat read_committed "kcat is not installed (compat-tests/kafka-clients/compat-part.sh installs it)"
fi
if /usr/bin/python3 -c 'import confluent_kafka' 2>/dev/null; then
	check confluent-kafka transactions confluent-transactions "${GOTEST[@]}" -run '^TestConfluentTransactions$' ./compat-tests/kafkatxnpart/
else
	result FAIL confluent-kafka transactions "python3-confluent-kafka is not installed (compat-tests/kafka-clients/compat-part.sh installs it)"
fi
