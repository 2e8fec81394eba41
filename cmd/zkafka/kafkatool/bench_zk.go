package kafkatool

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"
)

// benchZKCmd runs create, get, set and delete over --records znodes under
// a fresh parent, one operation at a time, and prints each operation's
// rate and latency percentiles.
func benchZKCmd(f *connFlags, b *benchFlags) *cobra.Command {
	var parent string
	c := &cobra.Command{Use: "zk", Short: "create, get, set and delete --records znodes of --record-size bytes", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(f.check(), b.check()); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), b.duration)
			defer cancel()
			z, err := f.requireZooKeeper(ctx)
			if err != nil {
				return err
			}
			defer z.Close()
			root := z.path(parent) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			if err := ensurePath(z, root); err != nil {
				return err
			}
			data := make([]byte, b.size)
			ops := []struct {
				name string
				do   func(p string) error
			}{
				{"create", func(p string) error { _, err := z.Create(p, data, 0, zk.WorldACL(zk.PermAll)); return err }},
				{"get", func(p string) error { _, _, err := z.Get(p); return err }},
				{"set", func(p string) error { _, err := z.Set(p, data, -1); return err }},
				{"delete", func(p string) error { return z.Delete(p, -1) }},
			}
			var out []summary
			for _, op := range ops {
				var lat latencies
				var n, errs int64
				start := time.Now()
				pace := pacer{start: start, rate: b.throughput}
				for i := int64(0); i < b.records && ctx.Err() == nil; i++ {
					pace.wait(ctx, i)
					t0 := time.Now()
					if err := op.do(root + "/n" + strconv.FormatInt(i, 10)); err != nil {
						errs++
						continue
					}
					lat.add(time.Since(t0))
					n++
				}
				out = append(out, lat.summarize(op.name, n, n*int64(b.size), errs, time.Since(start)))
			}
			z.Delete(root, -1)
			if out[0].Records == 0 {
				return fmt.Errorf("bench zk: no create succeeded under %s", root)
			}
			return printSummary(cmd, f, out...)
		}}
	c.Flags().StringVar(&parent, "path", "/zkafka-bench", "the prefix of the parent znode to work under")
	return c
}
