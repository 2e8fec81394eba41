package kafkatool

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicsCmd is kafka-topics.sh: list, describe, create, alter, delete.
func topicsCmd() *cobra.Command {
	f := &connFlags{}
	c := &cobra.Command{Use: "topics", Short: "list, describe, create, alter and delete topics"}
	f.register(c)
	c.AddCommand(topicsListCmd(f), topicsDescribeCmd(f), topicsCreateCmd(f), topicsAlterCmd(f), topicsDeleteCmd(f))
	return c
}

// withCluster runs fn with an open cluster and a context bounded by
// --timeout; the shape of every admin command.
func withCluster(cmd *cobra.Command, f *connFlags, fn func(ctx context.Context, c *cluster) error) error {
	if err := f.check(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
	defer cancel()
	c, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	err = fn(ctx, c)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer from the cluster within --timeout %v (is a broker at %s?)", f.timeout, f.where())
	}
	return err
}

// where names the cluster for error messages.
func (f *connFlags) where() string {
	switch {
	case f.bootstrap != "":
		return f.bootstrap
	case f.zookeeper != "":
		return "the brokers registered in " + f.zookeeper
	}
	return defaultBootstrap
}

func topicsListCmd(f *connFlags) *cobra.Command {
	var internal bool
	c := &cobra.Command{Use: "list", Short: "list topics", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withCluster(cmd, f, func(ctx context.Context, cl *cluster) error {
				list := cl.adm.ListTopics
				if internal {
					list = cl.adm.ListTopicsWithInternal
				}
				td, err := list(ctx)
				if err != nil {
					return err
				}
				type row struct {
					Name       string `json:"name"`
					ID         string `json:"id"`
					Partitions int    `json:"partitions"`
					Replicas   int    `json:"replication_factor"`
				}
				var rows []row
				for _, t := range td.Sorted() {
					rows = append(rows, row{t.Topic, t.ID.String(), len(t.Partitions), t.Partitions.NumReplicas()})
				}
				if f.json() {
					return printJSON(cmd.OutOrStdout(), rows)
				}
				var tr []table.Row
				for _, r := range rows {
					tr = append(tr, table.Row{r.Name, r.Partitions, r.Replicas, r.ID})
				}
				printTable(cmd.OutOrStdout(), table.Row{"TOPIC", "PARTITIONS", "REPLICAS", "ID"}, tr)
				return nil
			})
		}}
	c.Flags().BoolVar(&internal, "internal", false, "include internal topics")
	return c
}

// partitionInfo is one partition as describe prints it.
type partitionInfo struct {
	Topic    string  `json:"topic"`
	Part     int32   `json:"partition"`
	Leader   int32   `json:"leader"`
	Epoch    int32   `json:"leader_epoch"`
	Replicas []int32 `json:"replicas"`
	ISR      []int32 `json:"isr"`
	Offline  []int32 `json:"offline_replicas"`
	Error    string  `json:"error,omitempty"`
}

func (p partitionInfo) underReplicated() bool { return len(p.ISR) < len(p.Replicas) }
func (p partitionInfo) unavailable() bool     { return p.Leader < 0 || p.Error != "" }

func partitionInfos(td kadm.TopicDetails) []partitionInfo {
	var out []partitionInfo
	for _, t := range td.Sorted() {
		for _, p := range t.Partitions.Sorted() {
			pi := partitionInfo{Topic: t.Topic, Part: p.Partition, Leader: p.Leader, Epoch: p.LeaderEpoch,
				Replicas: p.Replicas, ISR: p.ISR, Offline: p.OfflineReplicas}
			if p.Err != nil {
				pi.Error = p.Err.Error()
			}
			out = append(out, pi)
		}
	}
	return out
}

func ints(xs []int32) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

type topicDescription struct {
	Name       string            `json:"name"`
	ID         string            `json:"id"`
	Partitions []partitionInfo   `json:"partitions"`
	Configs    map[string]string `json:"configs"` // the topic's overrides
	Error      string            `json:"error,omitempty"`
}

func topicsDescribeCmd(f *connFlags) *cobra.Command {
	var under, unavail bool
	c := &cobra.Command{Use: "describe [TOPIC...]", Short: "partitions, leaders, replicas, ISR and configs of topics",
		RunE: func(cmd *cobra.Command, args []string) error {
			return withCluster(cmd, f, func(ctx context.Context, cl *cluster) error {
				td, err := cl.adm.ListTopics(ctx, args...)
				if err != nil {
					return err
				}
				var out []topicDescription
				names := td.Names()
				cfgs, err := topicOverrides(ctx, cl.adm, names)
				if err != nil {
					return err
				}
				for _, name := range names {
					t := td[name]
					d := topicDescription{Name: name, ID: t.ID.String(), Configs: cfgs[name]}
					if t.Err != nil {
						d.Error = t.Err.Error()
					}
					for _, p := range partitionInfos(kadm.TopicDetails{name: t}) {
						if (under && !p.underReplicated()) || (unavail && !p.unavailable()) {
							continue
						}
						d.Partitions = append(d.Partitions, p)
					}
					if (under || unavail) && len(d.Partitions) == 0 {
						continue
					}
					out = append(out, d)
				}
				for _, d := range out {
					if d.Error != "" && len(args) > 0 {
						return fmt.Errorf("topic %s: %s", d.Name, d.Error)
					}
				}
				if f.json() {
					return printJSON(cmd.OutOrStdout(), out)
				}
				printTopicDescriptions(cmd, out)
				return nil
			})
		}}
	c.Flags().BoolVar(&under, "under-replicated", false, "only partitions whose ISR is smaller than their replicas")
	c.Flags().BoolVar(&unavail, "unavailable", false, "only partitions without a leader")
	return c
}

func printTopicDescriptions(cmd *cobra.Command, out []topicDescription) {
	w := cmd.OutOrStdout()
	var rows []table.Row
	var crow []table.Row
	for _, d := range out {
		if d.Error != "" {
			rows = append(rows, table.Row{d.Name, "-", "-", "-", "-", d.Error})
		}
		for _, p := range d.Partitions {
			rows = append(rows, table.Row{p.Topic, p.Part, p.Leader, ints(p.Replicas), ints(p.ISR), p.Error})
		}
		keys := make([]string, 0, len(d.Configs))
		for k := range d.Configs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			crow = append(crow, table.Row{d.Name, k, d.Configs[k]})
		}
	}
	printTable(w, table.Row{"TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR", "ERROR"}, rows)
	if len(crow) > 0 {
		printTable(w, table.Row{"TOPIC", "CONFIG", "VALUE"}, crow)
	}
}

// topicOverrides returns each topic's configs that are set on the topic
// (DYNAMIC_TOPIC_CONFIG), the ones kafka-topics.sh --describe shows.
func topicOverrides(ctx context.Context, adm *kadm.Client, topics []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	if len(topics) == 0 {
		return out, nil
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, err
	}
	for _, rc := range rcs {
		m := map[string]string{}
		for _, c := range rc.Configs {
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil {
				m[c.Key] = *c.Value
			}
		}
		out[rc.Name] = m
	}
	return out, nil
}

// parseConfigs parses repeated --config k=v.
func parseConfigs(kvs []string) (map[string]*string, error) {
	m := map[string]*string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--config %q: want KEY=VALUE", kv)
		}
		m[k] = &v
	}
	return m, nil
}

func topicsCreateCmd(f *connFlags) *cobra.Command {
	var parts int32
	var rf int16
	var configs []string
	c := &cobra.Command{Use: "create TOPIC...", Short: "create topics", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := parseConfigs(configs)
			if err != nil {
				return err
			}
			return withCluster(cmd, f, func(ctx context.Context, cl *cluster) error {
				resps, err := cl.adm.CreateTopics(ctx, parts, rf, cfg, args...)
				if err != nil {
					return err
				}
				return reportResults(cmd, f, "created topic", resps.Sorted(), func(r kadm.CreateTopicResponse) (string, error) {
					return r.Topic, r.Err
				})
			})
		}}
	c.Flags().Int32Var(&parts, "partitions", -1, "partitions (default: the broker's num.partitions)")
	c.Flags().Int16Var(&rf, "replication-factor", -1, "replicas of each partition (default: the broker's default.replication.factor)")
	c.Flags().StringArrayVar(&configs, "config", nil, "a topic config KEY=VALUE (repeatable)")
	return c
}

// reportResults prints one line (or JSON object) per topic or group and fails
// if any topic failed, naming the first failure.
func reportResults[R any](cmd *cobra.Command, f *connFlags, verb string, rs []R, get func(R) (string, error)) error {
	type row struct {
		Name  string `json:"name"`
		Error string `json:"error,omitempty"`
	}
	noun := verb[strings.LastIndexByte(verb, ' ')+1:] // "topic", "group"
	var rows []row
	var first error
	for _, r := range rs {
		t, err := get(r)
		ro := row{Name: t}
		if err != nil {
			ro.Error = err.Error()
			if first == nil {
				first = fmt.Errorf("%s %s: %w", noun, t, err)
			}
		}
		rows = append(rows, ro)
	}
	if f.json() {
		if err := printJSON(cmd.OutOrStdout(), rows); err != nil {
			return err
		}
	} else {
		for _, r := range rows {
			if r.Error == "" {
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", verb, r.Name)
			}
		}
	}
	return first
}

func topicsDeleteCmd(f *connFlags) *cobra.Command {
	return &cobra.Command{Use: "delete TOPIC...", Short: "delete topics", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withCluster(cmd, f, func(ctx context.Context, cl *cluster) error {
				resps, err := cl.adm.DeleteTopics(ctx, args...)
				if err != nil {
					return err
				}
				return reportResults(cmd, f, "deleted topic", resps.Sorted(), func(r kadm.DeleteTopicResponse) (string, error) {
					return r.Topic, r.Err
				})
			})
		}}
}
