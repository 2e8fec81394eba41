# Sourced by compat-tests/compat.sh (which defines check, result, GOTEST and
# exports ZKAFKA_BIN): client SASL (DIGEST-MD5 through kazoo and zkCli.sh),
# sasl ACLs and enforced authentication on Apache ZooKeeper 3.8 and zkafka
# with the same zoo.cfg and JAAS file.
if [ "${ZKAFKA_ZK_READY:-1}" = 1 ] && [ -n "${ZKAFKA_BIN:-}" ] && [ -x "${ZKAFKA_BIN}" ]; then
	check zookeeper "SASL DIGEST-MD5" zk-sasl "${GOTEST[@]}" -run '^(TestKazooSASL|TestZkCliSASL|TestEnforceSASL|TestDifferentialWithSASLOn|TestSASLWireBytes|TestSASLWithoutJAAS)$' ./compat-tests/zksasl/
else
	result "NOT RUN" zookeeper "SASL DIGEST-MD5" "no zkafka binary"
fi
