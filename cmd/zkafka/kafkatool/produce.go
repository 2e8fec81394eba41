package kafkatool

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceFlags are produce's own flags.
type produceFlags struct {
	file        string
	keySep      string
	headers     []string
	partition   int32
	partitioner string
	acks        string
	compression string
	idempotence bool
}

func produceCmd() *cobra.Command {
	f := &connFlags{}
	p := &produceFlags{}
	c := &cobra.Command{Use: "produce TOPIC", Short: "write records from stdin or a file, one per line",
		Long: "produce writes one record per input line to TOPIC. With --key-separator, a line is KEY<sep>VALUE.\n" +
			"Partitioners: murmur2 (keys as Kafka's Java producer, keyless records sticky), consistent_random\n" +
			"(CRC32 of the key as librdkafka, keyless records random), round-robin, random, sticky.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runProduce(cmd, f, p, args[0]) }}
	f.register(c)
	fl := c.Flags()
	fl.StringVar(&p.file, "file", "", "read records from this file instead of stdin")
	fl.StringVar(&p.keySep, "key-separator", "", "split each line into KEY and VALUE at the first SEP (default: no keys)")
	fl.StringArrayVar(&p.headers, "header", nil, "a header KEY=VALUE on every record (repeatable)")
	fl.Int32Var(&p.partition, "partition", -1, "write every record to this partition")
	fl.StringVar(&p.partitioner, "partitioner", "murmur2", "murmur2, consistent_random, round-robin, random or sticky")
	fl.StringVar(&p.acks, "acks", "all", "acknowledgements: all (-1), 1 or 0")
	fl.StringVar(&p.compression, "compression", "none", "none, gzip, snappy, lz4 or zstd")
	fl.BoolVar(&p.idempotence, "idempotence", true, "idempotent writes (needs --acks all)")
	return c
}

// producerOpts turns the flags into kgo options.
func (p *produceFlags) producerOpts(cmd *cobra.Command) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	switch p.acks {
	case "all", "-1":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()))
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()))
	default:
		return nil, fmt.Errorf("--acks %q: want all, 1 or 0", p.acks)
	}
	if p.acks == "1" || p.acks == "0" {
		if cmd.Flags().Changed("idempotence") && p.idempotence {
			return nil, errors.New("--idempotence needs --acks all")
		}
		p.idempotence = false
	}
	if !p.idempotence {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	codec, err := compressionCodec(p.compression)
	if err != nil {
		return nil, err
	}
	opts = append(opts, kgo.ProducerBatchCompression(codec))
	if p.partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	} else {
		if _, err := newPlacement(p.partitioner); err != nil {
			return nil, err
		}
		opts = append(opts, kgo.RecordPartitioner(kgoPartitioner{p.partitioner}))
	}
	return opts, nil
}

func compressionCodec(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "none", "":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("--compression %q: want none, gzip, snappy, lz4 or zstd", name)
}

func parseHeaders(hs []string) ([]kgo.RecordHeader, error) {
	var out []kgo.RecordHeader
	for _, h := range hs {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--header %q: want KEY=VALUE", h)
		}
		out = append(out, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	return out, nil
}

// produceSummary is what produce reports at the end (-o json).
type produceSummary struct {
	Topic      string          `json:"topic"`
	Records    int64           `json:"records"`
	Bytes      int64           `json:"bytes"`
	Partitions map[int32]int64 `json:"partitions"` // records written per partition
}

func runProduce(cmd *cobra.Command, f *connFlags, p *produceFlags, topic string) error {
	if err := f.check(); err != nil {
		return err
	}
	opts, err := p.producerOpts(cmd)
	if err != nil {
		return err
	}
	headers, err := parseHeaders(p.headers)
	if err != nil {
		return err
	}
	in := cmd.InOrStdin()
	if p.file != "" {
		fh, err := os.Open(p.file)
		if err != nil {
			return err
		}
		defer fh.Close()
		in = fh
	}
	ctx := cmd.Context()
	opts = append(opts, kgo.RecordDeliveryTimeout(f.timeout), kgo.ProduceRequestTimeout(f.timeout))
	cl, err := f.open(ctx, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	bar := startProgress(cmd.ErrOrStderr(), "producing to "+topic, 0)
	sum, err := produceLines(ctx, cl.kc, in, topic, p, headers, bar)
	bar.stop()
	if err != nil {
		return err
	}
	if f.json() {
		return printJSON(cmd.OutOrStdout(), sum)
	}
	noun := "records"
	if sum.Records == 1 {
		noun = "record"
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "produced %d %s (%d bytes) to %s\n", sum.Records, noun, sum.Bytes, topic)
	return nil
}

// produceLines writes every line of in as a record and waits for all of
// them; the first failure is returned (and stops reading).
func produceLines(ctx context.Context, kc *kgo.Client, in io.Reader, topic string, p *produceFlags,
	headers []kgo.RecordHeader, bar *progressBar) (*produceSummary, error) {
	sum := &produceSummary{Topic: topic, Partitions: map[int32]int64{}}
	var mu sync.Mutex
	var first error
	failed := func() error {
		mu.Lock()
		defer mu.Unlock()
		return first
	}
	r := bufio.NewReaderSize(in, 1<<16)
	for {
		line, rerr := r.ReadBytes('\n')
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > 0 || (rerr == nil) {
			rec := &kgo.Record{Topic: topic, Value: line, Headers: headers, Partition: p.partition}
			if p.keySep != "" {
				if k, v, ok := bytes.Cut(line, []byte(p.keySep)); ok {
					rec.Key, rec.Value = k, v
				}
			}
			size := int64(len(rec.Key) + len(rec.Value))
			kc.Produce(ctx, rec, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					if first == nil {
						first = fmt.Errorf("producing to %s: %w", topic, err)
					}
					return
				}
				sum.Records++
				sum.Bytes += size
				sum.Partitions[r.Partition]++
				bar.add(1, size)
			})
		}
		if rerr == io.EOF {
			break
		} else if rerr != nil {
			return nil, rerr
		}
		if err := failed(); err != nil {
			break
		}
	}
	if err := kc.Flush(ctx); err != nil {
		return nil, err
	}
	if err := failed(); err != nil {
		return nil, err
	}
	return sum, nil
}
