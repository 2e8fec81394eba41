package kafkatool

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
)

// benchCmd holds the load generators, kafka-producer-perf-test and
// kafka-consumer-perf-test as zkafka commands, and one for ZooKeeper.
func benchCmd() *cobra.Command {
	f := &connFlags{}
	b := &benchFlags{}
	c := &cobra.Command{Use: "bench", Short: "load generators: produce, consume, zk; throughput and latency percentiles"}
	f.register(c)
	p := c.PersistentFlags()
	p.Int64Var(&b.records, "records", 10000, "records (or ZooKeeper operations) to send")
	p.IntVar(&b.size, "record-size", 100, "bytes of each record (or znode)")
	p.Float64Var(&b.throughput, "throughput", -1, "at most this many records (operations) per second; -1: no limit")
	p.DurationVar(&b.duration, "duration", time.Minute, "stop after this long even if not all records were sent")
	c.AddCommand(benchProduceCmd(f, b), benchConsumeCmd(f, b), benchZKCmd(f, b))
	return c
}

type benchFlags struct {
	records    int64
	size       int
	throughput float64
	duration   time.Duration
}

func (b *benchFlags) check() error {
	if b.records <= 0 || b.size < 0 {
		return errors.New("--records must be > 0 and --record-size >= 0")
	}
	return nil
}

// pacer spaces operations out to --throughput.
type pacer struct {
	start time.Time
	rate  float64
}

// wait sleeps until operation i may start.
func (p pacer) wait(ctx context.Context, i int64) {
	if p.rate <= 0 {
		return
	}
	due := p.start.Add(time.Duration(float64(i) / p.rate * float64(time.Second)))
	if d := time.Until(due); d > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
}

func printSummary(cmd *cobra.Command, f *connFlags, ss ...summary) error {
	if f.json() {
		if len(ss) == 1 {
			return printJSON(cmd.OutOrStdout(), ss[0])
		}
		return printJSON(cmd.OutOrStdout(), ss)
	}
	var rows []table.Row
	for _, s := range ss {
		rows = append(rows, table.Row{s.Op, s.Records, s.Errors, fmt.Sprintf("%.0f", s.RecordsSec), fmt.Sprintf("%.2f", s.MBSec),
			fmt.Sprintf("%.2f", s.P50), fmt.Sprintf("%.2f", s.P99), fmt.Sprintf("%.2f", s.P999), fmt.Sprintf("%.2f", s.Max)})
	}
	printTable(cmd.OutOrStdout(), table.Row{"OP", "RECORDS", "ERRORS", "RECORDS/S", "MB/S", "P50 MS", "P99 MS", "P99.9 MS", "MAX MS"}, rows)
	return nil
}

func benchProduceCmd(f *connFlags, b *benchFlags) *cobra.Command {
	pf := &produceFlags{}
	c := &cobra.Command{Use: "produce TOPIC", Short: "produce --records records of --record-size bytes; latency is send to acknowledgement",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := errors.Join(f.check(), b.check()); err != nil {
				return err
			}
			pf.partition, pf.partitioner = -1, "sticky"
			opts, err := pf.producerOpts(cmd)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), b.duration)
			defer cancel()
			cl, err := f.open(ctx, append(opts, kgo.RecordDeliveryTimeout(f.timeout))...)
			if err != nil {
				return err
			}
			defer cl.Close()
			s, err := benchProduce(ctx, cmd, cl.kc, b, args[0])
			if err != nil {
				return err
			}
			return printSummary(cmd, f, s)
		}}
	c.Flags().StringVar(&pf.acks, "acks", "all", "acknowledgements: all (-1), 1 or 0")
	c.Flags().StringVar(&pf.compression, "compression", "none", "none, gzip, snappy, lz4 or zstd")
	c.Flags().BoolVar(&pf.idempotence, "idempotence", true, "idempotent writes (needs --acks all)")
	return c
}

func benchProduce(ctx context.Context, cmd *cobra.Command, kc *kgo.Client, b *benchFlags, topic string) (summary, error) {
	var lat latencies
	var ok, failed, bytes atomic.Int64
	var firstErr atomic.Value
	value := make([]byte, b.size)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	bar := startProgress(cmd.ErrOrStderr(), "producing to "+topic, b.records)
	start := time.Now()
	pace := pacer{start: start, rate: b.throughput}
	var sent int64
	for ; sent < b.records && ctx.Err() == nil; sent++ {
		pace.wait(ctx, sent)
		t0 := time.Now()
		kc.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
				return
			}
			lat.add(time.Since(t0))
			ok.Add(1)
			bytes.Add(int64(len(value)))
			bar.add(1, int64(len(value)))
		})
	}
	kc.Flush(context.WithoutCancel(ctx))
	elapsed := time.Since(start)
	bar.stop()
	if ok.Load() == 0 {
		if e, _ := firstErr.Load().(error); e != nil {
			return summary{}, fmt.Errorf("producing to %s: %w", topic, e)
		}
		return summary{}, fmt.Errorf("producing to %s: nothing acknowledged within --duration", topic)
	}
	return lat.summarize("produce", ok.Load(), bytes.Load(), failed.Load(), elapsed), nil
}

func benchConsumeCmd(f *connFlags, b *benchFlags) *cobra.Command {
	return &cobra.Command{Use: "consume TOPIC", Short: "read --records records from the start; latency is per poll",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := errors.Join(f.check(), b.check()); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), b.duration)
			defer cancel()
			cl, err := f.open(ctx, kgo.ConsumeTopics(args[0]), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err != nil {
				return err
			}
			defer cl.Close()
			var lat latencies
			var n, bytes int64
			bar := startProgress(cmd.ErrOrStderr(), "consuming "+args[0], b.records)
			start := time.Now()
			for n < b.records && ctx.Err() == nil {
				t0 := time.Now()
				fs := cl.kc.PollRecords(ctx, int(min(b.records-n, 10000)))
				if err := fetchError(fs); err != nil {
					bar.stop()
					return err
				}
				if k := int64(fs.NumRecords()); k > 0 {
					lat.add(time.Since(t0))
					fs.EachRecord(func(r *kgo.Record) { bytes += int64(len(r.Key) + len(r.Value)) })
					n += k
					bar.add(k, 0)
				}
			}
			elapsed := time.Since(start)
			bar.stop()
			if n == 0 {
				return fmt.Errorf("consuming %s: no records within --duration %v", args[0], b.duration)
			}
			return printSummary(cmd, f, lat.summarize("consume", n, bytes, 0, elapsed))
		}}
}
