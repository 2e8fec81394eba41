package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// AlterConfigs (key 33), v0-2, via kmsg.
//
// Topics: the request's entries replace the whole set of the topic's
// overrides, as in Kafka (an entry with a null value is left out; a key
// not given goes back to its default). Validated by the topic-config
// rules, stored in /config/topics/{t} and announced in /config/changes
// (topicconfig_alter.go); validate_only checks without writing. Brokers:
// likewise the whole set of a broker's (or, for "", the cluster
// default's) dynamic configs, only keys that are dynamic
// (dynamic_config.go). Other resource types: INVALID_REQUEST.

func init() { regKey(kproto.KeyAlterConfigs, 0, 2, kmsgHandler(handleAlterConfigs)) }

func handleAlterConfigs(c *conn, req *kmsg.AlterConfigsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, r := range req.Resources {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		if rr.ErrorCode = c.configsDenied(authz.OpAlterConfigs, r.ResourceType, r.ResourceName); rr.ErrorCode != 0 {
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		code, msg := codeOf(c.b.alterConfigs(&r, req.ValidateOnly))
		rr.ErrorCode, rr.ErrorMessage = int16(code), msg
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

func (b *Broker) alterConfigs(r *kmsg.AlterConfigsRequestResource, validateOnly bool) error {
	switch r.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		return b.alterTopicOverrides(r.ResourceName, validateOnly, func(cur map[string]string) error {
			clear(cur)
			for _, e := range r.Configs {
				if e.Value != nil {
					cur[e.Name] = *e.Value
				}
			}
			return nil
		})
	case kmsg.ConfigResourceTypeBroker:
		return b.alterBrokerConfigs(r.ResourceName, validateOnly, func(cur map[string]string) error {
			clear(cur)
			for _, e := range r.Configs {
				if e.Value != nil {
					cur[e.Name] = *e.Value
				}
			}
			return nil
		})
	}
	return adminErr(kproto.CodeInvalidRequest, "AlterConfigs is only supported for topics and brokers, but resource type is %s", r.ResourceType)
}
