# Sourced by compat-tests/compat.sh (which defines check, result, GOTEST and
# exports ZKAFKA_BIN): the differential run against a 3-server Apache
# ZooKeeper ensemble and a 3-server zkafka ensemble, sessions spread over
# the servers.
if [ "${ZKAFKA_ZK_READY:-1}" = 1 ] && [ -n "${ZKAFKA_BIN:-}" ] && [ -x "${ZKAFKA_BIN}" ]; then
	check go-zookeeper ensemble go-ensemble "${GOTEST[@]}" -run '^(TestEnsembleApacheVsZkafka|TestSessionMovedApache|TestEnsembleFourLetterWords|TestSessionSurvivesLeaderFailoverApache|TestDynamicConfigFileApacheVsZkafka|TestReconfigZkCliApacheVsZkafka|TestReconfigUnderLoad)$' ./compat-tests/ensemble/
else
	result "NOT RUN" go-zookeeper ensemble "no zkafka binary"
fi
