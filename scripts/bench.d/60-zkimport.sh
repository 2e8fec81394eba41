#!/usr/bin/env bash
# zk-import (issue 14): an Apache ZooKeeper data directory of one million
# znodes (100-byte values) and a 100k-txn log, imported into a zkafka data
# directory (znodes/s, MB/s, peak RSS of the importing process), beside
# Apache ZooKeeper 3.8 loading the same directory at start-up (Debian's
# package; JVM heap 4 GB). About 15 s and 2 GB of memory; the files are
# generated (apachezk.WriteSnapshotFile, apachezk.LogWriter) in a temporary
# directory that is removed. ZKIMPORT_ZNODES / ZKIMPORT_TXNS change the size.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./compat-tests/zkimportbench -znodes "${ZKIMPORT_ZNODES:-1000000}" -txns "${ZKIMPORT_TXNS:-100000}"
