// Package zkimport tests the way from Apache ZooKeeper to zkafka and back
// with data directories that Apache ZooKeeper 3.8 wrote itself (build tag
// compat): a scripted run of every txn type through go-zookeeper, the
// server killed and its last log torn mid-entry, a restart, a snapshot and
// more txns; then zkafka after zk-import and Apache ZooKeeper on the same
// directory must answer the same for every znode (data, ACL, stat) and the
// sessions with ephemerals, and so must Apache ZooKeeper on the snapshot
// that zk-export writes. A Kafka broker that ran on Apache ZooKeeper,
// restarted on zkafka's ZooKeeper after the import, serves its topic, its
// records and its group's committed offsets. Run with ZKAFKA_WRITE_FIXTURES=DIR it also copies
// the data directory there (store/apachezk/testdata was made so).
package zkimport
