#!/usr/bin/env bash
# Transactions: franz-go produce throughput of 1 KiB records, idempotent
# and transactional (100 and 1000 records per transaction) in the same
# run, and the cost of a commit (EndTxn answered; markers written) p50/p99,
# against an in-process ZooKeeper and broker (compat-tests/kafkatxn/cmd/txnbench).
set -euo pipefail
go run ./compat-tests/kafkatxn/cmd/txnbench -d 5s -commits 300
