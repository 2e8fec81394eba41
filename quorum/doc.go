// Package quorum is the ZooKeeper server: the client listener, sessions, the
// request pipeline, watches, and replication of every write through
// go.etcd.io/raft/v3 (standalone is an ensemble of one voter).
package quorum
