# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST),
# after kafka-clients/compat-part.sh has installed kcat: records produced and
# read back with kcat (librdkafka) over an SSL listener. (The franz-go SSL
# tests run in make test.)
if command -v kcat >/dev/null; then
	check kcat ssl kcat-ssl "${GOTEST[@]}" -run '^TestKcatSSL$' ./compat-tests/kafkassl/
else
	result FAIL kcat ssl "kcat is not installed (compat-tests/kafka-clients/compat-part.sh installs it)"
fi
