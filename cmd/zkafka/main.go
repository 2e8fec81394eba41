// Command zkafka is one binary that is a drop-in ZooKeeper server (standalone
// or an ensemble) and a Kafka broker that keeps its cluster metadata in
// ZooKeeper, with the tools to look inside both.
//
// Usage:
//
//	zkafka run                         ZooKeeper on 127.0.0.1:2181 and one broker on 127.0.0.1:9092
//	zkafka zookeeper zoo.cfg           a ZooKeeper server from a standard zoo.cfg
//	zkafka broker server.properties    a Kafka broker from a standard server.properties
//	zkafka zk [cmd]                    a ZooKeeper shell with zkCli's commands
//	zkafka completion bash|zsh|fish    shell completion
//	zkafka version
//
// root.go holds the command tree (subcommands is its one list), servers.go
// the server commands, zkshell the ZooKeeper shell.
package main

import "os"

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}
