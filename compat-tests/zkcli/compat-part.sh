# Sourced by compat-tests/compat.sh (which defines check, result, GOTEST and
# exports ZKAFKA_BIN):
#   - `zkafka zk` (cmd/zkafka/zkshell) and Apache's zkCli.sh run the same
#     scripts against a live Apache ZooKeeper 3.8; what they print is
#     compared step by step;
#   - zkCli.sh's setquota / listquota / delquota against Apache ZooKeeper
#     3.8 and zkafka, both with enforceQuota=true, outputs compared command
#     by command.
check zkafka-zk apache zkshell-apache "${GOTEST[@]}" -run '^TestShellMatchesZkCliOnApache$' ./cmd/zkafka/zkshell/
if [ "${ZKAFKA_ZK_READY:-1}" = 1 ] && [ -n "${ZKAFKA_BIN:-}" ] && [ -x "${ZKAFKA_BIN}" ]; then
	check zkcli-quota apache-vs-zkafka zkcli-quota "${GOTEST[@]}" -run '^TestQuotaApacheVsZkafka$' ./compat-tests/zkcli/
else
	result "NOT RUN" zkcli-quota apache-vs-zkafka "no zkafka binary"
fi
