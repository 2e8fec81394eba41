package raftnode

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingLog counts the fsyncs of a logStore.
type countingLog struct {
	logStore
	syncs *atomic.Int64
}

func (c countingLog) Sync() error {
	c.syncs.Add(1)
	return c.logStore.Sync()
}

// nopSM applies nothing; it isolates the cost of raftnode itself.
type nopSM struct{}

func (nopSM) Apply(uint64, []byte) any        { return nil }
func (nopSM) Snapshot() func(io.Writer) error { return func(io.Writer) error { return nil } }
func (nopSM) Restore(io.Reader) error         { return nil }

// BenchmarkPropose measures proposals per second and fsyncs per proposal
// of 100-byte entries on a single voter with its log on disk, with 1 and
// 32 concurrent proposers (group commit shares an fsync among the
// proposals that arrive together). Run: go test -run XXX -bench Propose
// ./quorum/raftnode/
func BenchmarkPropose(b *testing.B) {
	for _, proposers := range []int{1, 32} {
		b.Run(fmt.Sprintf("proposers=%d", proposers), func(b *testing.B) {
			var syncs atomic.Int64
			cfg := testConfig(1, b.TempDir())
			cfg.TickInterval = 100 * time.Millisecond
			cfg.openLog = func(dir string, logger *slog.Logger) (logStore, error) {
				l, err := openSegLog(dir, 64<<20, nil, logger)
				if err != nil {
					return nil, err
				}
				return countingLog{l, &syncs}, nil
			}
			n := mustStart(b, cfg, nopSM{})
			defer n.Stop()
			mustPropose(b, n, "warm-up")
			data := make([]byte, 100)
			var next atomic.Int64
			syncs.Store(0)
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for range proposers {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if _, _, err := n.Propose(context.Background(), data); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "proposals/s")
			b.ReportMetric(float64(syncs.Load())/float64(b.N), "fsyncs/proposal")
		})
	}
}
