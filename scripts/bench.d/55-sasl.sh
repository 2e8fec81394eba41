#!/usr/bin/env bash
# Kafka SASL (issue 12): SCRAM-SHA-256 and SCRAM-SHA-512 logins per second
# (auths/s) against an in-process broker on an in-process ZooKeeper: each
# login a new connection, SaslHandshake and the two SaslAuthenticate round
# trips, 4 goroutines per core, the client's PBKDF2 cached. About 15 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
go test -run '^$' -bench '^BenchmarkSCRAMAuthentications$' -benchtime 3s ./compat-tests/kafkasasl/
