#!/usr/bin/env bash
# The ZooKeeper ensemble: leader kill -9 -> new leader and first acknowledged
# write, on a 3-voter zkafka ensemble (tickTime 1000) under four writing
# clients. (Throughput of a 3-voter zkafka ensemble beside a 3-voter Apache
# ensemble with compat-tests/zkbench is not wired in yet.)
set -euo pipefail
for i in 1 2 3; do
	go test -count=1 -run '^TestKillLeaderDuringWrites$' -v ./compat-tests/ensemble/ 2>&1 |
		grep '^ensemble failover' || echo "ensemble failover: run $i failed"
done
