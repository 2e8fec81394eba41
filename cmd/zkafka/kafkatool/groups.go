package kafkatool

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// groupsCmd is kafka-consumer-groups.sh: list, describe, reset-offsets, delete.
func groupsCmd() *cobra.Command {
	f := &connFlags{}
	c := &cobra.Command{Use: "groups", Short: "list, describe, reset the offsets of and delete consumer groups"}
	f.register(c)
	c.AddCommand(groupsListCmd(f), groupsDescribeCmd(f), groupsResetCmd(f), groupsDeleteCmd(f))
	return c
}

func groupsListCmd(f *connFlags) *cobra.Command {
	return &cobra.Command{Use: "list", Short: "list groups", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withCluster(cmd, f, func(ctx context.Context, cl *cluster) error {
				lg, err := cl.adm.ListGroups(ctx)
				if err != nil {
					return err
				}
				type row struct {
					Group        string `json:"group"`
					State        string `json:"state"`
					ProtocolType string `json:"protocol_type"`
					Coordinator  int32  `json:"coordinator"`
				}
				var rows []row
				for _, g := range lg.Sorted() {
					rows = append(rows, row{g.Group, g.State, g.ProtocolType, g.Coordinator})
				}
				if f.json() {
					return printJSON(cmd.OutOrStdout(), rows)
				}
				var tr []table.Row
				for _, r := range rows {
					tr = append(tr, table.Row{r.Group, r.State, r.ProtocolType, r.Coordinator})
				}
				printTable(cmd.OutOrStdout(), table.Row{"GROUP", "STATE", "PROTOCOL TYPE", "COORDINATOR"}, tr)
				return nil
			})
		}}
}

// groupPartition is one partition of a group as describe prints it.
type groupPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed int64  `json:"committed"` // -1: none
	End       int64  `json:"end"`
	Lag       int64  `json:"lag"` // -1: unknown
	Member    string `json:"member,omitempty"`
	Host      string `json:"host,omitempty"`
	Owner     string `json:"zk_owner,omitempty"` // /consumers/G/owners/T/P, with --zookeeper
	Error     string `json:"error,omitempty"`
}

type groupDescription struct {
	Group      string           `json:"group"`
	State      string           `json:"state"`
	Protocol   string           `json:"protocol"`
	Members    []groupMember    `json:"members"`
	Partitions []groupPartition `json:"partitions"`
	TotalLag   int64            `json:"total_lag"`
}

type groupMember struct {
	ID       string `json:"id"`
	ClientID string `json:"client_id"`
	Host     string `json:"host"`
}

func groupsDescribeCmd(f *connFlags) *cobra.Command {
	return &cobra.Command{Use: "describe GROUP...", Short: "members, assignments, committed offsets and lag", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withCluster(cmd, f, func(ctx context.Context, cl *cluster) error {
				lags, err := cl.adm.Lag(ctx, args...)
				if err != nil {
					return err
				}
				var out []groupDescription
				for _, name := range args {
					l, ok := lags[name]
					if !ok {
						return fmt.Errorf("group %s: not described", name)
					}
					if err := l.Error(); err != nil {
						return fmt.Errorf("group %s: %w", name, err)
					}
					if err := withZKOffsets(ctx, cl, &l); err != nil {
						return err
					}
					if l.State == "Dead" && len(l.Lag) == 0 {
						return fmt.Errorf("group %s does not exist", name)
					}
					out = append(out, describeGroup(cl, l))
				}
				if f.json() {
					return printJSON(cmd.OutOrStdout(), out)
				}
				for _, d := range out {
					printGroup(cmd, d)
				}
				return nil
			})
		}}
}

func describeGroup(cl *cluster, l kadm.DescribedGroupLag) groupDescription {
	d := groupDescription{Group: l.Group, State: l.State, Protocol: l.Protocol, TotalLag: l.Lag.Total()}
	for _, m := range l.Members {
		d.Members = append(d.Members, groupMember{m.MemberID, m.ClientID, m.ClientHost})
	}
	for _, ml := range l.Lag.Sorted() {
		gp := groupPartition{Topic: ml.Topic, Partition: ml.Partition, Committed: ml.Commit.At, End: ml.End.Offset, Lag: ml.Lag}
		if ml.Member != nil {
			gp.Member, gp.Host = ml.Member.MemberID, ml.Member.ClientHost
		}
		if ml.Err != nil {
			gp.Error = ml.Err.Error()
		}
		if cl.zk != nil {
			p := cl.zk.path("/consumers/" + l.Group + "/owners/" + ml.Topic + "/" + strconv.Itoa(int(ml.Partition)))
			if data, _, err := cl.zk.Get(p); err == nil {
				gp.Owner = string(data)
			}
		}
		d.Partitions = append(d.Partitions, gp)
	}
	sort.Slice(d.Partitions, func(i, j int) bool {
		a, b := d.Partitions[i], d.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return d
}

func dash(n int64) any {
	if n < 0 {
		return "-"
	}
	return n
}

func printGroup(cmd *cobra.Command, d groupDescription) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "group %s: %s, %d members, total lag %d\n", d.Group, d.State, len(d.Members), d.TotalLag)
	var rows []table.Row
	for _, p := range d.Partitions {
		member := p.Member
		if member == "" {
			member = p.Owner
		}
		rows = append(rows, table.Row{p.Topic, p.Partition, dash(p.Committed), dash(p.End), dash(p.Lag), member, p.Host})
	}
	printTable(w, table.Row{"TOPIC", "PARTITION", "COMMITTED", "END", "LAG", "MEMBER", "HOST"}, rows)
}

func groupsDeleteCmd(f *connFlags) *cobra.Command {
	return &cobra.Command{Use: "delete GROUP...", Short: "delete empty groups and their offsets", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withCluster(cmd, f, func(ctx context.Context, cl *cluster) error {
				rs, err := cl.adm.DeleteGroups(ctx, args...)
				if err != nil {
					return err
				}
				var sorted []kadm.DeleteGroupResponse
				for _, name := range args {
					sorted = append(sorted, rs[name])
				}
				return reportResults(cmd, f, "deleted group", sorted, func(r kadm.DeleteGroupResponse) (string, error) {
					return r.Group, r.Err
				})
			})
		}}
}
