# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST),
# after kafka-clients/compat-part.sh has installed kcat: a compacted topic
# produced and read back with kcat (librdkafka), lz4, idempotent, NULL
# tombstones. (The franz-go compaction tests run in make test.)
if command -v kcat >/dev/null; then
	check kcat compaction kcat-compaction "${GOTEST[@]}" -run '^TestKcatCompaction$' ./compat-tests/kafkacompact/
else
	result FAIL kcat compaction "kcat is not installed (compat-tests/kafka-clients/compat-part.sh installs it)"
fi
