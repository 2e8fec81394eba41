#!/usr/bin/env bash
# Kafka cluster (issue 10): three `bin/zkafka broker` processes on `bin/zkafka
# zookeeper`, each on 127.0.0.1: franz-go acks=all produce RF 3 against RF 1
# on the same cluster (1 KiB, 8 partitions; the ratio, target ≥ 0.51) with
# the brokers' CPU per GB and replication's share of it, end-to-end p99 at
# 20 MB/s RF 3 acks=all (≤ 10 ms), kill -9 failover to the first
# acknowledged write (median of 10, ≤ session timeout + 1 s) and controlled
# shutdown (≤ 1 s), and OffsetCommit throughput (kadm.CommitOffsets, 1 and 8
# loops) on the 3 brokers against a single broker, as ratios. RF 3 cases
# print "skipped" while followers do not replicate. The logs go under the working directory and are removed on
# exit. About 2 minutes with replication, 20 s without.
set -euo pipefail
cd "$(dirname "$0")/../.."
go build -o bin/zkafka ./cmd/zkafka
go run ./compat-tests/kafkaclusterbench -zkafka bin/zkafka "$@"
