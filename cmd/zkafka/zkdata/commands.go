package zkdata

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkafka/zkafka/quorum"
	"github.com/zkafka/zkafka/store/apachezk"
)

// Commands returns zk-import, zk-export and zk-copy.
func Commands() []*cobra.Command {
	return []*cobra.Command{importCmd(), exportCmd(), copyCmd()}
}

func loadConfig(path string) (quorum.Config, error) {
	return quorum.LoadConfig(path, slog.New(slog.DiscardHandler))
}

func importCmd() *cobra.Command {
	var from string
	c := &cobra.Command{
		Use:   "zk-import --from DIR zoo.cfg",
		Short: "import an Apache ZooKeeper data directory into the zkafka server that zoo.cfg describes",
		Long: `zk-import reads an Apache ZooKeeper 3.x data directory (the newest valid
version-2/snapshot.* and the version-2/log.* files after it, checking their
headers and checksums) and writes the tree, with every stat, ACL and open
session, as the starting state of the zkafka server of zoo.cfg. The zkafka
data directory must hold no zkafka data yet; it appears only once the
import is complete. zxids given out afterwards follow the last imported one.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == "" {
				return fmt.Errorf("--from DIR is required")
			}
			cfg, err := loadConfig(args[0])
			if err != nil {
				return err
			}
			return RunImport(cmd.OutOrStdout(), from, cfg)
		},
	}
	c.Flags().StringVar(&from, "from", "", "the Apache ZooKeeper dataDir (or its version-2)")
	return c
}

// RunImport loads dir and seeds cfg's data directory with it.
func RunImport(out io.Writer, dir string, cfg quorum.Config) error {
	start := time.Now()
	dt, info, err := apachezk.LoadDir(dir)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	tree, err := dt.Tree(quorum.TreeOptions(cfg))
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	for _, s := range info.Skipped {
		fmt.Fprintf(out, "skipped a damaged snapshot: %s\n", s)
	}
	for _, t := range info.Torn {
		fmt.Fprintf(out, "torn log (its valid prefix was used, as ZooKeeper does): %s\n", filepath.Base(t))
	}
	if err := quorum.ImportTree(cfg, tree); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	snap := "none"
	if info.Snapshot != "" {
		snap = filepath.Base(info.Snapshot)
	}
	fmt.Fprintf(out, "imported %d znodes and %d sessions at zxid 0x%x (snapshot %s + %d txns from %d log files) in %v\n",
		tree.NodeCount(), len(dt.Sessions), tree.LastZxid(), snap, info.Txns, len(info.Logs), time.Since(start).Round(time.Millisecond))
	return nil
}

func exportCmd() *cobra.Command {
	var to string
	c := &cobra.Command{
		Use:   "zk-export --to DIR zoo.cfg",
		Short: "export a stopped zkafka server's tree as an Apache ZooKeeper 3.8 snapshot",
		Long: `zk-export reads the data directory of the stopped zkafka server of zoo.cfg
(its newest snapshot and the committed log after it) and writes
DIR/version-2/snapshot.<zxid>, which Apache ZooKeeper 3.8 loads with
dataDir=DIR: every znode with its stats and ACL, and the open sessions.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == "" {
				return fmt.Errorf("--to DIR is required")
			}
			cfg, err := loadConfig(args[0])
			if err != nil {
				return err
			}
			return RunExport(cmd.OutOrStdout(), cfg, to)
		},
	}
	c.Flags().StringVar(&to, "to", "", "the Apache ZooKeeper dataDir to write (its version-2 must be empty or absent)")
	return c
}

// RunExport writes the tree of the stopped server of cfg into dir as a ZooKeeper snapshot.
func RunExport(out io.Writer, cfg quorum.Config, dir string) error {
	if des, err := os.ReadDir(filepath.Join(dir, "version-2")); err == nil && len(des) > 0 {
		return fmt.Errorf("export: %s already holds ZooKeeper data", filepath.Join(dir, "version-2"))
	}
	tree, zxid, err := quorum.ExportTree(cfg)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	name, err := apachezk.WriteSnapshotFile(dir, tree, zxid)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(out, "exported %d znodes and %d sessions to %s\n", tree.NodeCount(), len(tree.SessionList()), name)
	return nil
}

func copyCmd() *cobra.Command {
	var opts CopyOptions
	c := &cobra.Command{
		Use:   "zk-copy --from HOST:PORT --to HOST:PORT [--path /]",
		Short: "copy a tree between two running ZooKeeper servers through the client protocol",
		Long: `zk-copy copies the persistent znodes under --path (data and ACLs) from one
running ZooKeeper server (Apache's or zkafka's) to another. It cannot carry
sessions, ephemeral znodes, stats (zxids, times, versions) or node types
(containers, TTL nodes become persistent) and says so when done; for those,
stop the server and use zk-import.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.From == "" || opts.To == "" {
				return fmt.Errorf("--from and --to are required")
			}
			if f, ok := cmd.ErrOrStderr().(*os.File); ok && isTerminal(f) {
				opts.Progress = f
			}
			rep, err := Copy(opts)
			if rep != nil {
				fmt.Fprint(cmd.OutOrStdout(), rep.String())
			}
			return err
		},
	}
	c.Flags().StringVar(&opts.From, "from", "", "the source server, host:port")
	c.Flags().StringVar(&opts.To, "to", "", "the target server, host:port")
	c.Flags().StringVar(&opts.Path, "path", "/", "the subtree to copy")
	c.Flags().StringArrayVar(&opts.Auth, "auth", nil, "scheme:credentials for both sessions, e.g. digest:user:pass (repeatable)")
	c.Flags().DurationVar(&opts.Timeout, "timeout", 30*time.Second, "session timeout and connect limit")
	return c
}
