// Package zkshell is `zkafka zk`: a ZooKeeper shell with zkCli.sh's
// commands, their spellings and their output, run one command from the
// arguments or interactively with history and completion of paths.
package zkshell
