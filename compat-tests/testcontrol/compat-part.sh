# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST),
# after kafka-clients/compat-part.sh has installed kcat: the zkafkatest
# control API (zkafka run --control) driven from kcat (a produce through an
# injected error, retried) and kazoo (a session expiry it asked for).
if command -v kcat >/dev/null; then
	check kcat control-api kcat-control "${GOTEST[@]}" -run '^TestKcatRetriesInjectedError$' ./compat-tests/testcontrol/
else
	result FAIL kcat control-api "kcat is not installed (compat-tests/kafka-clients/compat-part.sh installs it)"
fi
check kazoo control-api kazoo-control "${GOTEST[@]}" -run '^TestKazooSeesExpiry$' ./compat-tests/testcontrol/
