package kafkago

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// produceSync produces recs and fails the test on any error.
func produceSync(t testing.TB, c *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	if err := c.ProduceSync(ctxT(t), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// consumeN reads n records of topic from the start.
func consumeN(t testing.TB, e *env, topic string, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	opts = append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200 * time.Millisecond)}, opts...)
	c := e.Client(opts...)
	var out []*kgo.Record
	ctx := ctxT(t)
	for len(out) < n {
		fs := c.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(out), n, err)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", tp, p, err) })
		out = append(out, fs.Records()...)
	}
	return out
}

func TestProduceConsumeEveryCodec(t *testing.T) {
	e := startBroker(t)
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			topic := "codec-" + name
			p := e.Client(kgo.ProducerBatchCompression(codec), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
			var want []*kgo.Record
			for i := 0; i < 200; i++ {
				r := &kgo.Record{
					Key:     []byte(fmt.Sprintf("key-%d", i)),
					Value:   bytes.Repeat([]byte(fmt.Sprintf("value-%d ", i)), 20),
					Headers: []kgo.RecordHeader{{Key: "h1", Value: []byte(name)}, {Key: "n", Value: []byte(fmt.Sprint(i))}},
				}
				want = append(want, r)
			}
			produceSync(t, p, want...)
			got := consumeN(t, e, topic, len(want))
			if len(got) != len(want) {
				t.Fatalf("got %d records, want %d", len(got), len(want))
			}
			for i, r := range got {
				w := want[i]
				if r.Offset != int64(i) || !bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Value, w.Value) ||
					len(r.Headers) != 2 || r.Headers[0].Key != "h1" || string(r.Headers[0].Value) != name ||
					string(r.Headers[1].Value) != fmt.Sprint(i) {
					t.Fatalf("record %d: got offset %d key %q headers %v", i, r.Offset, r.Key, r.Headers)
				}
			}
		})
	}
}

func TestLogAppendTimeTopic(t *testing.T) {
	e := startBroker(t)
	if _, err := e.Admin().CreateTopic(ctxT(t), 1, 1, map[string]*string{"message.timestamp.type": strPtr("LogAppendTime")}, "lat"); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, e.Addr)
	before := time.Now().UnixMilli()
	r := produceRaw(c, "lat", 0, buildBatch(-1, -1, -1, 1000, "old", "timestamps"))
	if r.ErrorCode != 0 || r.LogAppendTime < before {
		t.Fatalf("produce: %+v", r)
	}
	got := consumeN(t, e, "lat", 2)
	for _, rec := range got {
		if rec.Timestamp.UnixMilli() != r.LogAppendTime || rec.Attrs.TimestampType() != 1 {
			t.Fatalf("record timestamp %v, want the log append time %d", rec.Timestamp, r.LogAppendTime)
		}
	}
}

func strPtr(s string) *string { return &s }
