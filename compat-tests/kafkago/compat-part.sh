# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST),
# after kafka-clients/compat-part.sh has installed kcat: `kcat -L` against a
# three-broker cluster lists every broker and each partition's leader,
# replicas and ISR as the state znodes have them. (The franz-go metadata
# tests run in make test.)
if command -v kcat >/dev/null; then
	check kcat metadata kcat-metadata "${GOTEST[@]}" -run '^TestKcatMetadata$' ./compat-tests/kafkago/
else
	result FAIL kcat metadata "kcat is not installed (compat-tests/kafka-clients/compat-part.sh installs it)"
fi
