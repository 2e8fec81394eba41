#!/usr/bin/env bash
# Kafka connection pipeline (issue 16): a produce (256 × 1 KiB, 8 in flight)
# and a consumer's fetch (1 MiB by sendfile, one in flight) over a loopback
# socket to a served broker connection, in-process: ns/op, the process's
# CPU ns and context switches per request (steadier than elapsed time on a
# shared machine), allocations per request. About 10 seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
go test -run='^$' -bench='Conn$' -benchmem -benchtime=2s -count=3 ./broker/
