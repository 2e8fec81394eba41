# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST):
# `zkafka zk` (cmd/zkafka/zkshell) and Apache's zkCli.sh run the same
# scripts against a live Apache ZooKeeper 3.8, and what they print is
# compared step by step.
check zkafka-zk apache zkshell-apache "${GOTEST[@]}" -run '^TestShellMatchesZkCliOnApache$' ./cmd/zkafka/zkshell/
