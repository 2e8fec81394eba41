# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST),
# after kafka-clients/compat-part.sh has installed kcat, python3-kafka and
# python3-confluent-kafka: the broker's SASL listeners with kcat and
# confluent-kafka (librdkafka; SASL_SSL with SCRAM-SHA-512 and PLAIN) and
# kafka-python (SASL_PLAINTEXT with PLAIN and SCRAM, SaslHandshake v0). (The
# franz-go SASL tests run in make test.)
if command -v kcat >/dev/null; then
	check kcat sasl kcat-sasl "${GOTEST[@]}" -run '^TestKcat(SASL|WrongPassword)$' ./compat-tests/kafkasasl/
else
	result FAIL kcat sasl "kcat is not installed (compat-tests/kafka-clients/compat-part.sh installs it)"
fi
if /usr/bin/python3 -c 'import confluent_kafka, kafka' 2>/dev/null; then
	check confluent-kafka sasl confluent-sasl "${GOTEST[@]}" -run '^TestConfluentKafkaSASL$' ./compat-tests/kafkasasl/
	check kafka-python sasl kafka-python-sasl "${GOTEST[@]}" -run '^TestKafkaPythonSASL$' ./compat-tests/kafkasasl/
else
	result FAIL kafka-python sasl "python3-kafka or python3-confluent-kafka is not installed (kafka-clients/compat-part.sh installs them)"
fi
# The broker as a secured ZooKeeper client: SASL DIGEST-MD5 (the JAAS Client
# section) to Apache ZooKeeper 3.8 and zkafka, TLS with a client certificate to the
# secure client port of Apache ZooKeeper and zkafka, zookeeper.set.acl.
if [ "${ZKAFKA_ZK_READY:-1}" = 1 ] && [ -n "${ZKAFKA_BIN:-}" ] && [ -x "${ZKAFKA_BIN}" ]; then
	check broker zookeeper kafka-zk-client "${GOTEST[@]}" -run '^TestBrokerZooKeeper(SASL|TLS)$' ./compat-tests/kafkasasl/
else
	result "NOT RUN" broker zookeeper "no zkafka binary"
fi
