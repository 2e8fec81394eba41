package kafkatool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type consumeFlags struct {
	from      string
	partition int32
	group     string
	count     int64
	untilEnd  bool
	format    string
}

func consumeCmd() *cobra.Command {
	f := &connFlags{}
	cf := &consumeFlags{}
	c := &cobra.Command{Use: "consume TOPIC", Short: "read records, kcat-style",
		Long: "consume prints TOPIC's records with --format (kcat's -f: %t %p %o %k %s %K %S %T %h, \\n \\t).\n" +
			"With --zookeeper and --group it is a ZooKeeper-coordinated consumer: members under\n" +
			"/consumers/GROUP/ids, range assignment, owners and offsets znodes, as Kafka's old consumer.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runConsume(cmd, f, cf, args[0]) }}
	f.register(c)
	fl := c.Flags()
	fl.StringVar(&cf.from, "from", "end", "where to start: beginning, end, OFFSET or @TIMESTAMP (ms); a group's committed offset wins")
	fl.Int32Var(&cf.partition, "partition", -1, "only this partition")
	fl.StringVar(&cf.group, "group", "", "consume as a member of this group and commit offsets")
	fl.Int64Var(&cf.count, "count", 0, "stop after this many records")
	fl.BoolVar(&cf.untilEnd, "until-end", false, "stop at the end offsets of when consume started")
	fl.StringVar(&cf.format, "format", `%s\n`, "how to print each record (ignored with -o json)")
	return c
}

// startOffset is a parsed --from.
type startOffset struct {
	kind string // "beginning", "end", "offset", "time"
	n    int64  // the offset, or the timestamp in ms
}

func parseFrom(s string) (startOffset, error) {
	switch {
	case s == "beginning" || s == "earliest":
		return startOffset{kind: "beginning"}, nil
	case s == "end" || s == "latest":
		return startOffset{kind: "end"}, nil
	case strings.HasPrefix(s, "@"):
		n, err := strconv.ParseInt(s[1:], 10, 64)
		if err == nil && n >= 0 {
			return startOffset{kind: "time", n: n}, nil
		}
	default:
		n, err := strconv.ParseInt(s, 10, 64)
		if err == nil && n >= 0 {
			return startOffset{kind: "offset", n: n}, nil
		}
	}
	return startOffset{}, fmt.Errorf("--from %q: want beginning, end, OFFSET or @TIMESTAMP_MS", s)
}

func (s startOffset) kgo() kgo.Offset {
	switch s.kind {
	case "beginning":
		return kgo.NewOffset().AtStart()
	case "offset":
		return kgo.NewOffset().At(s.n)
	case "time":
		return kgo.NewOffset().AfterMilli(s.n)
	}
	return kgo.NewOffset().AtEnd()
}

// printer writes consumed records as --format or -o json say; safe for
// one goroutine.
type printer struct {
	w    io.Writer
	fmt  recordFormat
	json bool
	buf  []byte
}

func (p *printer) add(r *kgo.Record) {
	if p.json {
		p.buf = appendJSONRecord(p.buf, r)
	} else {
		p.buf = p.fmt.append(p.buf, r)
	}
}

// flush writes what add gathered, once per poll.
func (p *printer) flush() error {
	if len(p.buf) == 0 {
		return nil
	}
	_, err := p.w.Write(p.buf)
	p.buf = p.buf[:0]
	return err
}

func runConsume(cmd *cobra.Command, f *connFlags, cf *consumeFlags, topic string) error {
	if err := f.check(); err != nil {
		return err
	}
	from, err := parseFrom(cf.from)
	if err != nil {
		return err
	}
	rf, err := parseFormat(cf.format)
	if err != nil {
		return err
	}
	pr := &printer{w: cmd.OutOrStdout(), fmt: rf, json: f.json()}
	if cf.group != "" && cf.partition >= 0 {
		return errors.New("--partition and --group exclude each other: a group assigns partitions")
	}
	if f.zookeeper != "" && cf.group != "" {
		return runZKConsumer(cmd, f, cf, from, pr, topic)
	}
	ctx := cmd.Context()
	opts := []kgo.Opt{kgo.ConsumeResetOffset(from.kgo())}
	switch {
	case cf.group != "":
		opts = append(opts, kgo.ConsumerGroup(cf.group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit())
	case cf.partition >= 0:
		opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {cf.partition: from.kgo()}}))
	default:
		opts = append(opts, kgo.ConsumeTopics(topic))
	}
	cl, err := f.open(ctx, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	var ends *endTracker
	if cf.untilEnd {
		if ends, err = startEnds(ctx, f, cl.adm, topic, cf, from); err != nil {
			return err
		}
	}
	total := cf.count
	if ends != nil && (total == 0 || ends.total() < total) {
		total = ends.total()
	}
	bar := startProgress(cmd.ErrOrStderr(), "consuming "+topic, total)
	defer bar.stop()
	return pollLoop(ctx, cl.kc, cf, pr, ends, bar)
}

// pollLoop prints records until --count, --until-end or the context
// ends; with a group it commits what it printed.
func pollLoop(ctx context.Context, kc *kgo.Client, cf *consumeFlags, pr *printer, ends *endTracker, bar *progressBar) error {
	var n int64
	for !ends.done() {
		fs := kc.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil // interrupted: not a failure
		}
		if err := fetchError(fs); err != nil {
			return err
		}
		var printed []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			if (cf.count > 0 && n >= cf.count) || ends.past(r) {
				return
			}
			pr.add(r)
			bar.add(1, int64(len(r.Key)+len(r.Value)))
			ends.saw(r)
			printed = append(printed, r)
			n++
		})
		if err := pr.flush(); err != nil {
			return err
		}
		if cf.group != "" && len(printed) > 0 {
			if err := kc.CommitRecords(ctx, printed...); err != nil {
				return fmt.Errorf("committing offsets of group %s: %w", cf.group, err)
			}
		}
		if cf.count > 0 && n >= cf.count {
			return nil
		}
	}
	return nil
}

// fetchError returns the first error of a poll that is not the context's.
func fetchError(fs kgo.Fetches) error {
	for _, e := range fs.Errors() {
		if errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, context.DeadlineExceeded) {
			continue
		}
		if e.Topic == "" {
			return e.Err
		}
		return fmt.Errorf("topic %s partition %d: %w", e.Topic, e.Partition, e.Err)
	}
	return nil
}

// endTracker is --until-end: the end offset of every partition still to
// be read up to; nil-safe (no --until-end).
type endTracker struct {
	mu   sync.Mutex
	left map[int32]int64 // partition -> end offset; present while records before it are unread
	all  int64
}

// startEnds lists the end offsets at the start, and drops partitions
// where the start position is already at the end.
func startEnds(ctx context.Context, f *connFlags, adm *kadm.Client, topic string, cf *consumeFlags, from startOffset) (*endTracker, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	endOs, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	if err := endOs.Error(); err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	starts, err := startPositions(ctx, adm, topic, cf, from)
	if err != nil {
		return nil, err
	}
	t := &endTracker{left: map[int32]int64{}}
	endOs.Each(func(o kadm.ListedOffset) {
		if cf.partition >= 0 && o.Partition != cf.partition {
			return
		}
		if s := starts[o.Partition]; s < o.Offset {
			t.left[o.Partition] = o.Offset
			t.all += o.Offset - s
		}
	})
	return t, nil
}

// startPositions is where each partition starts reading: the group's
// committed offset if it has one, else --from.
func startPositions(ctx context.Context, adm *kadm.Client, topic string, cf *consumeFlags, from startOffset) (map[int32]int64, error) {
	var los kadm.ListedOffsets
	var err error
	switch from.kind {
	case "beginning":
		los, err = adm.ListStartOffsets(ctx, topic)
	case "end":
		los, err = adm.ListEndOffsets(ctx, topic)
	case "time":
		los, err = adm.ListOffsetsAfterMilli(ctx, from.n, topic)
	}
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	los.Each(func(o kadm.ListedOffset) {
		out[o.Partition] = o.Offset
		if o.Offset < 0 { // no record at or after the time
			out[o.Partition] = 1<<63 - 1
		}
	})
	if from.kind == "offset" {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return nil, err
		}
		ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = from.n })
	}
	if cf.group != "" {
		committed, err := adm.FetchOffsetsForTopics(ctx, cf.group, topic)
		if err != nil {
			return nil, err
		}
		committed.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && o.At >= 0 {
				out[o.Partition] = o.At
			}
		})
	}
	return out, nil
}

func (t *endTracker) total() int64 {
	if t == nil {
		return 0
	}
	return t.all
}

func (t *endTracker) done() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.left) == 0
}

// past reports whether r is at or beyond its partition's end.
func (t *endTracker) past(r *kgo.Record) bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	end, ok := t.left[r.Partition]
	return !ok || r.Offset >= end
}

func (t *endTracker) saw(r *kgo.Record) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if end, ok := t.left[r.Partition]; ok && r.Offset+1 >= end {
		delete(t.left, r.Partition)
	}
}
