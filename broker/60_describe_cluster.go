package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// DescribeCluster (key 60), v0-1, via kmsg: the live brokers and the
// controller id as the controller's last UpdateMetadata gave them
// (metadata_cache.go), and the cluster id; endpoint type (v1) must be 1 (brokers),
// otherwise UNSUPPORTED_ENDPOINT_TYPE (as a ZooKeeper-mode broker); each
// broker's rack (null for none). As Kafka, it refuses nobody: cluster authorized operations, when
// asked for, are 0 for a principal that may not DESCRIBE the cluster.

func init() { regKey(kproto.KeyDescribeCluster, 0, 1, kmsgHandler(handleDescribeCluster)) }

const codeUnsupportedEndpointType = 119

func handleDescribeCluster(c *conn, req *kmsg.DescribeClusterRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	if req.Version >= 1 && req.EndpointType != 1 {
		resp.ErrorCode = codeUnsupportedEndpointType
		return resp, nil
	}
	resp.EndpointType = 1
	resp.ClusterID = c.b.clusterID
	resp.ControllerID = c.b.meta.controllerID()
	resp.ClusterAuthorizedOperations = c.clusterOperations(req.IncludeClusterAuthorizedOperations)
	for _, br := range c.b.meta.liveBrokers() {
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.Host, rb.Port = br.at(c.listener)
		rb.NodeID, rb.Rack = br.id, br.rackOrNil()
		resp.Brokers = append(resp.Brokers, rb)
	}
	return resp, nil
}
