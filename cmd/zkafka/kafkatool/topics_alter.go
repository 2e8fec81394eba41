package kafkatool

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// API keys alter asks the broker about before changing configs.
const (
	keyAlterConfigs            = 33
	keyIncrementalAlterConfigs = 44
)

func topicsAlterCmd(f *connFlags) *cobra.Command {
	var parts int
	var set, del []string
	c := &cobra.Command{Use: "alter TOPIC...", Short: "raise the partition count or change configs of topics", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if parts <= 0 && len(set) == 0 && len(del) == 0 {
				return errors.New("nothing to alter: give --partitions, --config or --delete-config")
			}
			cfg, err := parseConfigs(set)
			if err != nil {
				return err
			}
			return withCluster(cmd, f, func(ctx context.Context, cl *cluster) error {
				if parts > 0 {
					resps, err := cl.adm.UpdatePartitions(ctx, parts, args...)
					if err != nil {
						return err
					}
					if err := reportResults(cmd, f, fmt.Sprintf("%d partitions for topic", parts), resps.Sorted(),
						func(r kadm.CreatePartitionsResponse) (string, error) { return r.Topic, r.Err }); err != nil {
						return err
					}
				}
				if len(cfg) == 0 && len(del) == 0 {
					return nil
				}
				return alterTopicConfigs(ctx, cmd, f, cl, cfg, del, args)
			})
		}}
	c.Flags().IntVar(&parts, "partitions", 0, "the new (larger) partition count")
	c.Flags().StringArrayVar(&set, "config", nil, "set a topic config KEY=VALUE (repeatable)")
	c.Flags().StringArrayVar(&del, "delete-config", nil, "remove a topic config override KEY (repeatable)")
	return c
}

// alterTopicConfigs sends IncrementalAlterConfigs; a broker that does not
// advertise it (nor AlterConfigs) is reported as such, before anything is
// sent, rather than as the client's generic "broker too old".
func alterTopicConfigs(ctx context.Context, cmd *cobra.Command, f *connFlags, cl *cluster, set map[string]*string, del, topics []string) error {
	vs, err := cl.adm.ApiVersions(ctx)
	if err != nil {
		return err
	}
	for _, v := range vs.Sorted() {
		if v.Err != nil {
			return fmt.Errorf("broker %d: %w", v.NodeID, v.Err)
		}
		_, inc := v.KeyMaxVersion(keyIncrementalAlterConfigs)
		_, full := v.KeyMaxVersion(keyAlterConfigs)
		if !inc && !full {
			return fmt.Errorf("altering topic configs: UNSUPPORTED_VERSION: broker %d does not support IncrementalAlterConfigs (key 44) or AlterConfigs (key 33)", v.NodeID)
		}
		if !inc {
			return fmt.Errorf("altering topic configs: UNSUPPORTED_VERSION: broker %d supports only AlterConfigs (key 33), which replaces every config; not sent", v.NodeID)
		}
	}
	var acs []kadm.AlterConfig
	for k, v := range set {
		acs = append(acs, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: v})
	}
	for _, k := range del {
		acs = append(acs, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	resps, err := cl.adm.AlterTopicConfigs(ctx, acs, topics...)
	if err != nil {
		return err
	}
	return reportResults(cmd, f, "altered configs of topic", resps, func(r kadm.AlterConfigsResponse) (string, error) {
		if r.Err != nil && r.ErrMessage != "" {
			// The broker's message names the key and why (Kafka's codes
			// alone say only "Configuration is invalid").
			return r.Name, fmt.Errorf("%w: %s", r.Err, r.ErrMessage)
		}
		return r.Name, r.Err
	})
}
