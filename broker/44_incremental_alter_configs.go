package broker

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// IncrementalAlterConfigs (key 44), v0-1 (v1 flexible), via kmsg.
//
// Topics: SET and DELETE edit one override; APPEND and SUBTRACT edit a
// list-typed one (cleanup.policy), from Kafka's default when there is no
// override; the others are kept. A key given twice, or a null value for
// anything but DELETE, is INVALID_REQUEST, as in Kafka. The result is
// validated, stored and announced as for AlterConfigs
// (topicconfig_alter.go); validate_only checks without writing. Brokers:
// SET and DELETE edit a dynamic broker config (dynamic_config.go); no
// dynamic broker key is list-typed here, so APPEND and SUBTRACT are
// INVALID_REQUEST.

func init() {
	regKey(kproto.KeyIncrementalAlterConfigs, 0, 1, kmsgHandler(handleIncrementalAlterConfigs))
}

func handleIncrementalAlterConfigs(c *conn, req *kmsg.IncrementalAlterConfigsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, r := range req.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		if rr.ErrorCode = c.configsDenied(authz.OpAlterConfigs, r.ResourceType, r.ResourceName); rr.ErrorCode != 0 {
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		code, msg := codeOf(c.b.incrementalAlterConfigs(&r, req.ValidateOnly))
		rr.ErrorCode, rr.ErrorMessage = int16(code), msg
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

func (b *Broker) incrementalAlterConfigs(r *kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	if err := checkIncrementalOps(r.Configs); err != nil {
		return err
	}
	switch r.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		return b.alterTopicOverrides(r.ResourceName, validateOnly, func(cur map[string]string) error {
			return applyIncremental(cur, r.Configs)
		})
	case kmsg.ConfigResourceTypeBroker:
		return b.alterBrokerConfigs(r.ResourceName, validateOnly, func(cur map[string]string) error {
			return applyIncrementalBroker(cur, r.Configs)
		})
	}
	return adminErr(kproto.CodeInvalidRequest, "IncrementalAlterConfigs is only supported for topics and brokers, but resource type is %s", r.ResourceType)
}

// checkIncrementalOps refuses duplicate keys and null values, as Kafka's
// request checks do.
func checkIncrementalOps(ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	seen := map[string]bool{}
	var nulls []string
	for _, op := range ops {
		if seen[op.Name] {
			return adminErr(kproto.CodeInvalidRequest, "Error due to duplicate config keys")
		}
		seen[op.Name] = true
		if op.Value == nil && op.Op != kmsg.IncrementalAlterConfigOpDelete {
			nulls = append(nulls, op.Op.String()+":"+op.Name)
		}
	}
	if len(nulls) > 0 {
		return adminErr(kproto.CodeInvalidRequest, "Null value not supported for : %s", strings.Join(nulls, ","))
	}
	return nil
}
