#!/usr/bin/env bash
# The log cleaner (issue 17): MB/s of log cleaned (uncompressed and lz4
# batches, 85% duplicates) with its memory (offset map, heap allocated),
# and the append throughput of another log on the same disk while the
# cleaner runs, as a ratio to no cleaning, unthrottled and with
# log.cleaner.io.max.bytes.per.second at 32 MiB/s. The logs go under the
# working directory. About half a minute.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./store/compact/internal/cleanbench -mb 128 -append 3s "$@"
