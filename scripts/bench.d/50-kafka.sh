#!/usr/bin/env bash
# Kafka broker (issue 4): `bin/zkafka broker server.properties` with
# `bin/zkafka zookeeper zoo.cfg`, each a real process on 127.0.0.1, in one
# run with this machine's limits (buffered sequential write to the log's
# file system, loopback TCP between two processes, and sendfile of the
# fetched segment to a reader process): a raw pipelined client
# (pre-encoded Produce on 1 and 8 connections, Fetch read without decoding
# records), franz-go produce/consume of 1 KiB records (1 and 8 partitions, acks=1/all,
# none/lz4/zstd), end-to-end latency at 50 MB/s (quiet and with the CPU
# contended by a busy-looping process), broker CPU per GB from
# /proc, and franz-go against kfake (in-memory) for comparison. The logs go
# under the working directory (so onto its file system) and are removed on
# exit. About 1.5 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
go build -o bin/zkafka ./cmd/zkafka
go run ./compat-tests/kafkabench -zkafka bin/zkafka "$@"
