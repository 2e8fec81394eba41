#!/usr/bin/env bash
# make bench: benchmarks and load generators; each prints its own figures.
# Every scripts/bench.d/*.sh runs in name order after the Go benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== Go benchmarks (allocations per operation included)"
go test -run='^$' -bench=. -benchmem -benchtime=1s ./store/... ./zkproto/... ./kproto/... ./quorum/raftnode/
for part in scripts/bench.d/*.sh; do
	[ -f "$part" ] || continue
	echo
	echo "== ${part#scripts/bench.d/}"
	bash "$part"
done
