# Sourced by compat-tests/compat.sh (which defines check, result, GOTEST and
# exports ZKAFKA_BIN): the secure client port (TLS, x509 ACLs) of Apache
# ZooKeeper 3.8 and zkafka with the same zoo.cfg and key stores, and quorum
# TLS (sslQuorum, ssl.quorum.*) on a 3-server ensemble of each; zkCli.sh over
# TLS (the Netty client socket) on both.
if [ "${ZKAFKA_ZK_READY:-1}" = 1 ] && [ -n "${ZKAFKA_BIN:-}" ] && [ -x "${ZKAFKA_BIN}" ]; then
	check zookeeper "secure client port" zk-tls "${GOTEST[@]}" -run '^(TestSecureClient(Port|PortJKS|AuthWantNone)|TestQuorumTLSEnsembles|TestZkCliOverTLS)$' ./compat-tests/zktls/
else
	result "NOT RUN" zookeeper "secure client port" "no zkafka binary"
fi
