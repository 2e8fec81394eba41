// Package compattests drives zkafka with real third-party clients over real
// sockets, and runs differential checks against Apache ZooKeeper.
package compattests
