# Sourced by compat-tests/compat.sh (which defines check, result, GOTEST and
# exports ZKAFKA_BIN): the AdminServer's JSON (admin.enableServer=true)
# compared key by key with Apache ZooKeeper 3.8's Jetty AdminServer.
if [ "${ZKAFKA_ZK_READY:-1}" = 1 ] && [ -n "${ZKAFKA_BIN:-}" ] && [ -x "${ZKAFKA_BIN}" ]; then
	check go-zookeeper adminserver go-adminserver "${GOTEST[@]}" -run '^(TestAdminServerApacheVsZkafka|TestAdminServerEnsembleApacheVsZkafka)$' ./compat-tests/zkadmin/
else
	result "NOT RUN" go-zookeeper adminserver "no zkafka binary"
fi
