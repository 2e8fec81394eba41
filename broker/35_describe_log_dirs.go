package broker

import (
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// DescribeLogDirs (key 35), v0-4, via kmsg, as Kafka 3.7's
// ReplicaManager.describeLogDirs: each of log.dirs with the replicas this
// broker holds there (leading or following) among those asked (topics
// null: all), each with its size in bytes and offset lag
// max(high watermark - log end, 0), which is 0 here as in Kafka for a
// replica that is not a future one (zkafka has no
// AlterReplicaLogDirs, so is_future_key is always false); v4 adds the
// volume's total and usable bytes. Without DESCRIBE on the cluster the
// answer is CLUSTER_AUTHORIZATION_FAILED and no directories.

func init() { regKey(kproto.KeyDescribeLogDirs, 0, 4, kmsgHandler(handleDescribeLogDirs)) }

func handleDescribeLogDirs(c *conn, req *kmsg.DescribeLogDirsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if !c.allowedCluster(authz.OpDescribe) {
		resp.ErrorCode = int16(kproto.CodeClusterAuthorizationFailed)
		return resp, nil
	}
	wanted := func(string, int32) bool { return true }
	if req.Topics != nil {
		asked := map[string]map[int32]bool{}
		for _, t := range req.Topics {
			if asked[t.Topic] == nil {
				asked[t.Topic] = map[int32]bool{}
			}
			for _, p := range t.Partitions {
				asked[t.Topic][p] = true
			}
		}
		wanted = func(topic string, p int32) bool { return asked[topic][p] }
	}
	byDir := map[string]*kmsg.DescribeLogDirsResponseDir{}
	for _, d := range c.b.cfg.LogDirs {
		rd := kmsg.NewDescribeLogDirsResponseDir()
		rd.Dir = d
		rd.TotalBytes, rd.UsableBytes = volumeBytes(d)
		resp.Dirs = append(resp.Dirs, rd)
	}
	for i := range resp.Dirs {
		byDir[filepath.Clean(resp.Dirs[i].Dir)] = &resp.Dirs[i]
	}
	for _, t := range c.b.cluster.allTopics() {
		topics := map[string]*kmsg.DescribeLogDirsResponseDirTopic{}
		for i := range t.replicas {
			part := t.replica(int32(i))
			if part == nil || !wanted(t.name, int32(i)) {
				continue
			}
			rd := byDir[filepath.Dir(part.dir)]
			if rd == nil {
				continue
			}
			rt := topics[rd.Dir]
			if rt == nil {
				rd.Topics = append(rd.Topics, kmsg.NewDescribeLogDirsResponseDirTopic())
				rt = &rd.Topics[len(rd.Topics)-1]
				rt.Topic = t.name
				topics[rd.Dir] = rt
			}
			rp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			rp.Partition, rp.Size = int32(i), part.log.Size()
			rp.OffsetLag = max(part.highWatermark()-part.log.NextOffset(), 0)
			rt.Partitions = append(rt.Partitions, rp)
		}
	}
	return resp, nil
}
