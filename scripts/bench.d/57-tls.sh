#!/usr/bin/env bash
# TLS on both servers (issue 12), each a real process on 127.0.0.1, in one
# run: the broker's PLAINTEXT and SSL listeners side by side (franz-go
# produce of 1 KiB records for 3 s, acks=1, then consuming them all: MB/s,
# the SSL/PLAINTEXT ratio, broker CPU s/GB), and zkafka ZooKeeper's
# clientPort and secureClientPort (getData of a 100-byte znode from 16
# go-zookeeper sessions for 3 s each: ops/s, the ratio, server µs/op). A
# PEM keystore is made for the run. About 20 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
go build -o bin/zkafka ./cmd/zkafka
go run ./compat-tests/tlsbench -zkafka bin/zkafka "$@"
