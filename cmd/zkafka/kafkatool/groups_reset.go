package kafkatool

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

type resetFlags struct {
	topics   []string
	earliest bool
	latest   bool
	offset   int64
	datetime string
	shift    int64
	execute  bool
}

// resetRow is one partition's plan.
type resetRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Current   int64  `json:"current"` // -1: no commit
	New       int64  `json:"new"`
}

func groupsResetCmd(f *connFlags) *cobra.Command {
	r := &resetFlags{}
	c := &cobra.Command{Use: "reset-offsets GROUP", Short: "move a group's committed offsets (a dry run unless --execute)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			how, err := r.target()
			if err != nil {
				return err
			}
			return withCluster(cmd, f, func(ctx context.Context, cl *cluster) error {
				return runReset(ctx, cmd, f, cl, r, how, args[0])
			})
		}}
	fl := c.Flags()
	fl.StringArrayVar(&r.topics, "topic", nil, "only this topic (repeatable; default: the topics the group has offsets for)")
	fl.BoolVar(&r.earliest, "to-earliest", false, "to the log start offsets")
	fl.BoolVar(&r.latest, "to-latest", false, "to the end offsets")
	fl.Int64Var(&r.offset, "to-offset", -1, "to this offset (clamped to the log)")
	fl.StringVar(&r.datetime, "to-datetime", "", "to the first offset at or after this time (RFC 3339, or ms since the epoch)")
	fl.Int64Var(&r.shift, "shift-by", 0, "move each committed offset by N (clamped to the log)")
	fl.BoolVar(&r.execute, "execute", false, "commit the new offsets (default: only print them)")
	return c
}

// target names the one reset that the flags ask for.
func (r *resetFlags) target() (string, error) {
	var set []string
	if r.earliest {
		set = append(set, "earliest")
	}
	if r.latest {
		set = append(set, "latest")
	}
	if r.offset >= 0 {
		set = append(set, "offset")
	}
	if r.datetime != "" {
		set = append(set, "datetime")
	}
	if r.shift != 0 {
		set = append(set, "shift")
	}
	if len(set) != 1 {
		return "", errors.New("give exactly one of --to-earliest, --to-latest, --to-offset, --to-datetime, --shift-by")
	}
	return set[0], nil
}

func parseDatetime(s string) (int64, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UnixMilli(), nil
	}
	var ms int64
	if _, err := fmt.Sscan(s, &ms); err == nil && ms >= 0 {
		return ms, nil
	}
	return 0, fmt.Errorf("--to-datetime %q: want RFC 3339 (2026-01-02T15:04:05Z) or ms since the epoch", s)
}

func runReset(ctx context.Context, cmd *cobra.Command, f *connFlags, cl *cluster, r *resetFlags, how, group string) error {
	if r.execute {
		gs, err := cl.adm.DescribeGroups(ctx, group)
		if err != nil {
			return err
		}
		if g := gs[group]; len(g.Members) > 0 {
			return fmt.Errorf("group %s has %d active members (%s): stop them before resetting its offsets", group, len(g.Members), g.State)
		}
	}
	committed, err := cl.adm.FetchOffsets(ctx, group)
	if err != nil {
		return err
	}
	topics := r.topics
	if len(topics) == 0 {
		for t := range committed.Offsets() {
			topics = append(topics, t)
		}
	}
	if len(topics) == 0 {
		return fmt.Errorf("group %s has no committed offsets; name the topics with --topic", group)
	}
	starts, err := cl.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return err
	}
	ends, err := cl.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return err
	}
	var at kadm.ListedOffsets
	if how == "datetime" {
		ms, err := parseDatetime(r.datetime)
		if err != nil {
			return err
		}
		if at, err = cl.adm.ListOffsetsAfterMilli(ctx, ms, topics...); err != nil {
			return err
		}
	}
	var rows []resetRow
	var failed error
	ends.Each(func(e kadm.ListedOffset) {
		if e.Err != nil {
			failed = fmt.Errorf("topic %s partition %d: %w", e.Topic, e.Partition, e.Err)
			return
		}
		s, _ := starts.Lookup(e.Topic, e.Partition)
		cur := int64(-1)
		if o, ok := committed.Lookup(e.Topic, e.Partition); ok && o.Err == nil {
			cur = o.At
		}
		row := resetRow{Topic: e.Topic, Partition: e.Partition, Current: cur}
		switch how {
		case "earliest":
			row.New = s.Offset
		case "latest":
			row.New = e.Offset
		case "offset":
			row.New = r.offset
		case "shift":
			row.New = max(cur, s.Offset) + r.shift
		case "datetime":
			row.New = e.Offset
			if a, ok := at.Lookup(e.Topic, e.Partition); ok && a.Offset >= 0 {
				row.New = a.Offset
			}
		}
		row.New = min(max(row.New, s.Offset), e.Offset)
		rows = append(rows, row)
	})
	if failed != nil {
		return failed
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].Topic < rows[j].Topic || rows[i].Topic == rows[j].Topic && rows[i].Partition < rows[j].Partition
	})
	if err := printReset(cmd, f, rows, r.execute); err != nil {
		return err
	}
	if !r.execute {
		return nil
	}
	os := kadm.Offsets{}
	for _, row := range rows {
		os.Add(kadm.Offset{Topic: row.Topic, Partition: row.Partition, At: row.New, LeaderEpoch: -1})
	}
	return cl.adm.CommitAllOffsets(ctx, group, os)
}

func printReset(cmd *cobra.Command, f *connFlags, rows []resetRow, execute bool) error {
	if f.json() {
		return printJSON(cmd.OutOrStdout(), map[string]any{"executed": execute, "partitions": rows})
	}
	var tr []table.Row
	for _, r := range rows {
		tr = append(tr, table.Row{r.Topic, r.Partition, dash(r.Current), r.New})
	}
	printTable(cmd.OutOrStdout(), table.Row{"TOPIC", "PARTITION", "CURRENT", "NEW"}, tr)
	if !execute {
		fmt.Fprintln(cmd.OutOrStdout(), "dry run: nothing committed; add --execute to commit these offsets")
	}
	return nil
}
