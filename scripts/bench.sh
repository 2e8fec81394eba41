#!/usr/bin/env bash
# Runs the benchmarks and load generators; each prints its own figures.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== Go benchmarks (allocations per operation included)"
go test -run='^$' -bench=. -benchmem -benchtime=1s ./store/... ./zkproto/... ./kproto/...
if [ -d store/segment/internal/segbench ]; then
	echo
	echo "== segment log: append and read against the raw write limit of this disk"
	go run ./store/segment/internal/segbench
fi
