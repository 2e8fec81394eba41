// Package broker is the Kafka broker: the listener, one handler per API key,
// partitions on store/segment, the fetch long-poll, the group coordinator and
// the controller. It keeps cluster metadata in ZooKeeper through a real client
// (github.com/go-zookeeper/zk) and never imports quorum.
package broker
