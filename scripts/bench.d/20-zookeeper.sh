#!/usr/bin/env bash
# ZooKeeper (issues 3, 16): zkafka standalone (`bin/zkafka zookeeper
# zoo.cfg`, a real process, fsyncing) against Apache ZooKeeper 3.8
# standalone (Debian's package, forceSync=yes) with the same load
# generator, in one run: create, setData and getData of 100-byte values at
# 1 and 32 sessions (5 s each), three rounds with both servers running and
# taking turns case by case; ops/s, p50/p99, the load average, and the
# ratios of each round (best and median); then VmRSS of a fresh server of
# each after 100k and after one million znodes (pipelined creates, at most
# 2 min per server). About 6 minutes. Servers listen on 127.0.0.1 only and
# are stopped on exit.
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
go run ./compat-tests/zkbench -zkafka bin/zkafka "$@"
