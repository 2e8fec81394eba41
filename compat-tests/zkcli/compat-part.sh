# Sourced by compat-tests/compat.sh (which defines check, result, GOTEST and
# exports ZKAFKA_BIN): zkCli.sh's setquota / listquota / delquota against
# Apache ZooKeeper 3.8 and zkafka, both with enforceQuota=true, outputs
# compared command by command.
if [ "${ZKAFKA_ZK_READY:-1}" = 1 ] && [ -n "${ZKAFKA_BIN:-}" ] && [ -x "${ZKAFKA_BIN}" ]; then
	check zkcli-quota apache-vs-zkafka zkcli-quota "${GOTEST[@]}" -run '^TestQuotaApacheVsZkafka$' ./compat-tests/zkcli/
else
	result "NOT RUN" zkcli-quota apache-vs-zkafka "no zkafka binary"
fi
