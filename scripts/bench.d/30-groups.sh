#!/usr/bin/env bash
# The group coordinator: OffsetCommit throughput (one group committing 8
# partitions per request, from 1 and from 16 connections) and the time a
# 10-member group takes to rebalance when one member joins, against an
# in-process ZooKeeper and broker (compat-tests/kafkagroups/cmd/groupbench).
set -euo pipefail
go run ./compat-tests/kafkagroups/cmd/groupbench -d 5s -rebalances 3
