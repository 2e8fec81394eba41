# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST),
# after kafka-clients/compat-part.sh has installed kcat: kcat (librdkafka)
# reading with -X isolation.level=read_committed sees committed
# transactions only and stops at the last stable offset. (The franz-go
# transaction tests of this package run in make test.)
if command -v kcat >/dev/null; then
	check kcat read_committed kcat-read-committed "${GOTEST[@]}" -run '^TestKcatReadCommitted$' ./compat-tests/kafkatxnpart/
else
	result FAIL kcat read_committed "kcat is not installed (compat-tests/kafka-clients/compat-part.sh installs it)"
fi
