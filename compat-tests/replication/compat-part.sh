# compat-tests/replication/compat-part.sh — sourced by compat-tests/compat.sh
# (which provides check, result, log and GOTEST).
#
#   kcat   TestKcatConsumerOverFetchSessions: kcat reads every record of a
#          30-partition RF 3 topic from three in-process brokers whose
#          followers replicate in incremental fetch sessions (KIP-227)
CHECK_TIMEOUT=300 check kcat-fetch-sessions zkafka replication-kcat \
	"${GOTEST[@]}" -run '^TestKcatConsumerOverFetchSessions$' ./compat-tests/replication/
