#!/usr/bin/env bash
# The segment log: append and read against the raw write limit of this disk.
set -euo pipefail
go run ./store/segment/internal/segbench
