# Sourced by compat-tests/compat.sh (which defines check, result, GOTEST and
# exports ZKAFKA_BIN): raw-frame checks of the go-zookeeper suite that run
# the same frames against Apache ZooKeeper 3.8 and zkafka — the xid of a
# setWatches reply, and the order of the events it fires and its reply.
if [ "${ZKAFKA_ZK_READY:-1}" = 1 ] && [ -n "${ZKAFKA_BIN:-}" ] && [ -x "${ZKAFKA_BIN}" ]; then
	check go-zookeeper setwatches go-setwatches "${GOTEST[@]}" -run '^(TestApacheSetWatchesReplyXid|TestSetWatchesOrderApache)$' ./compat-tests/zkgo/
else
	result "NOT RUN" go-zookeeper setwatches "no zkafka binary"
fi
