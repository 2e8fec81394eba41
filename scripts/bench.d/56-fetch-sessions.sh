#!/usr/bin/env bash
# Fetch sessions (issue 11, KIP-227): bytes on the wire per follower Fetch
# of 500 idle partitions and per answer, full (sessionless) versus
# incremental, on two in-process brokers (franz-go's hooks count the
# bytes, size prefix and headers included). A few seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
go test -count=1 -run '^$' -bench FollowerFetchSession500Idle -benchtime 20x ./compat-tests/replication/ |
	grep -E 'Benchmark|^ok|FAIL'
