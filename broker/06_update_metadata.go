package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// UpdateMetadata (key 6), v8 only, via kmsg: the controller tells every
// broker the live brokers (with every listener's endpoint) and the states
// of the partitions that changed (all of them after an election or to a
// broker that just started; leader -2 for a topic being deleted). Epochs
// as in LeaderAndIsr (control_epochs.go); the request then replaces the
// broker's metadata cache (metadata_cache.go), from which Metadata and
// DescribeCluster answer, racks included.

func init() { regKey(int16(kmsg.UpdateMetadata), 8, 8, kmsgHandler(handleUpdateMetadata)) }

func handleUpdateMetadata(c *conn, req *kmsg.UpdateMetadataRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.UpdateMetadataResponse)
	if c.clusterActionDenied() {
		resp.ErrorCode = ec(kproto.CodeClusterAuthorizationFailed)
		return resp, nil
	}
	if code := c.b.epochs.check(req.ControllerEpoch, req.BrokerEpoch); code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	c.b.meta.update(req)
	return resp, nil
}
