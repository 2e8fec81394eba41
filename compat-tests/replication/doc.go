// Package replication tests zkafka's replication with franz-go over real
// sockets: three in-process brokers (kafkaenv.StartCluster) on one
// ZooKeeper, topics with replication factor 3, followers fetching from
// leaders, the high watermark, acks=all, ISR changes through
// AlterPartition, failover and log truncation after divergence; and the
// admin APIs of the replicated log (DeleteRecords, DescribeLogDirs,
// DescribeProducers, DescribeTopicPartitions).
package replication
