// Package zkgo drives zkafka's ZooKeeper server with the go-zookeeper/zk
// client (and, for opcodes that client lacks, a small raw client built on
// zkproto) over real sockets on 127.0.0.1.
package zkgo
