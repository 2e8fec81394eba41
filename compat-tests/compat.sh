#!/usr/bin/env bash
# make compat: the third-party clients that are not Go, and Apache ZooKeeper.
# Installs the Debian packages it needs, then runs each client's checks.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "compat: no non-Go client checks yet"
