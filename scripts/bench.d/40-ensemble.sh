#!/usr/bin/env bash
# The ZooKeeper ensemble (issue 6): a 3-voter zkafka ensemble beside a
# 3-voter Apache ZooKeeper 3.8 ensemble (Debian's package), one after the
# other on this machine, both fsyncing, both with tickTime 2000, driven by
# the same load generator (compat-tests/zkbench -ensemble): create, setData
# and getData of 100-byte values at 32 sessions spread over the servers
# (5 s each; ops/s, p50/p99, zkafka/Apache ratios), then five rounds of
# leader kill -9 under writers on the followers: time to a new leader and
# to the first acknowledged write; and the leader changes seen under load
# (no server killed; false elections). About 2-3 minutes. Servers listen on
# 127.0.0.1 only and are stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Apache ZooKeeper from Debian, installed only when missing.
if ! dpkg-query -W -f='${Status}' zookeeper 2>/dev/null | grep -q 'install ok installed' || ! command -v java >/dev/null; then
	SUDO=
	if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
	export DEBIAN_FRONTEND=noninteractive
	echo "installing zookeeper (Apache ZooKeeper 3.8) from Debian"
	if ! $SUDO apt-get install -y -qq --no-install-recommends zookeeper default-jre-headless >/dev/null; then
		$SUDO apt-get update -qq >/dev/null
		$SUDO apt-get install -y -qq --no-install-recommends zookeeper default-jre-headless >/dev/null
	fi
fi

go build -o bin/zkafka ./cmd/zkafka
go build -o bin/zkbench ./compat-tests/zkbench
# Progress goes to stderr, the table to stdout.
bin/zkbench -ensemble -zkafka bin/zkafka -dur 5s -warmup 3s -failover-rounds 5 "$@"
