package zkdata

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/jedib0t/go-pretty/v6/progress"
)

// CopyOptions configure a live copy.
type CopyOptions struct {
	From, To string   // host:port (comma-separated lists allowed)
	Path     string   // the subtree to copy; "/" is everything
	Auth     []string // scheme:credentials added to both sessions (e.g. digest:user:pass)
	Timeout  time.Duration
	Progress io.Writer // where the progress bar goes; nil: none
}

// CopyReport is what a live copy did and what it could not carry.
type CopyReport struct {
	Created, Updated int // persistent znodes written on the target
	SkippedEphemeral int // ephemeral znodes (they belong to a session)
	SkippedSystem    int // /zookeeper and what is under it
	Unreadable       []string
	Redacted         []string // digest ACLs the source showed as user:x (no ADMIN on the node)
	Bytes            int64
}

// copied is one znode read from the source.
type copied struct {
	path string
	data []byte
	acl  []zk.ACL
}

// Copy copies the persistent znodes of a subtree from one ZooKeeper server
// to another through the client protocol. Every znode is created with an
// open ACL first (so that its children can be created under it), and its
// own ACL is set once the whole tree is written, children before parents.
// What the client protocol cannot carry is not carried: sessions, the
// ephemeral znodes that belong to them, stats (zxids, times, versions and
// the cversion that numbers sequential children are the target's own),
// and the container or TTL type of a node (it is created persistent).
func Copy(opts CopyOptions) (*CopyReport, error) {
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	root := path.Clean("/" + strings.TrimPrefix(opts.Path, "/"))
	src, err := dial(opts.From, opts)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", opts.From, err)
	}
	defer src.Close()
	dst, err := dial(opts.To, opts)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", opts.To, err)
	}
	defer dst.Close()

	rep := &CopyReport{}
	bar := newBar(opts.Progress)
	defer bar.stop()
	read := bar.tracker("read "+opts.From, 0)
	nodes, err := walk(src, root, rep, read)
	if err != nil {
		return rep, err
	}
	read.MarkAsDone()
	write := bar.tracker("write "+opts.To, int64(len(nodes)))
	if err := writeAll(dst, nodes, rep, write); err != nil {
		return rep, err
	}
	write.MarkAsDone()
	return rep, nil
}

func dial(servers string, opts CopyOptions) (*zk.Conn, error) {
	conn, events, err := zk.Connect(strings.Split(servers, ","), opts.Timeout, zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	deadline := time.After(opts.Timeout)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				for _, a := range opts.Auth {
					scheme, cred, _ := strings.Cut(a, ":")
					if err := conn.AddAuth(scheme, []byte(cred)); err != nil {
						conn.Close()
						return nil, fmt.Errorf("auth %s: %w", scheme, err)
					}
				}
				return conn, nil
			}
			if ev.State == zk.StateAuthFailed {
				conn.Close()
				return nil, errors.New("authentication failed")
			}
		case <-deadline:
			conn.Close()
			return nil, errors.New("no session within the timeout")
		}
	}
}

// walk reads the subtree at root, parents before children.
func walk(c *zk.Conn, root string, rep *CopyReport, t *progress.Tracker) ([]copied, error) {
	var out []copied
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/") {
			rep.SkippedSystem++
			continue
		}
		data, stat, err := c.Get(p)
		if errors.Is(err, zk.ErrNoNode) {
			continue // deleted meanwhile
		}
		if errors.Is(err, zk.ErrNoAuth) {
			rep.Unreadable = append(rep.Unreadable, p)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if stat.EphemeralOwner != 0 {
			rep.SkippedEphemeral++
			continue
		}
		acl, _, err := c.GetACL(p)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, fmt.Errorf("read the ACL of %s: %w", p, err)
		}
		kids, _, err := c.Children(p)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, fmt.Errorf("list %s: %w", p, err)
		}
		if redacted(acl) {
			rep.Redacted = append(rep.Redacted, p)
		}
		out = append(out, copied{path: p, data: data, acl: acl})
		for _, k := range kids {
			queue = append(queue, path.Join(p, k))
		}
		t.Increment(1)
	}
	return out, nil
}

// redacted reports whether getACL hid a digest (ZooKeeper shows user:x to
// a client without ADMIN permission on the node).
func redacted(acl []zk.ACL) bool {
	for _, a := range acl {
		if a.Scheme == "digest" && strings.HasSuffix(a.ID, ":x") {
			return true
		}
	}
	return false
}

// writeAll creates (or overwrites) every node with an open ACL, then sets
// the ACLs from the deepest node up.
func writeAll(c *zk.Conn, nodes []copied, rep *CopyReport, t *progress.Tracker) error {
	open := zk.WorldACL(zk.PermAll)
	for _, n := range nodes {
		rep.Bytes += int64(len(n.data))
		if n.path == "/" {
			if _, err := c.Set("/", n.data, -1); err != nil {
				return fmt.Errorf("write /: %w", err)
			}
			rep.Updated++
			t.Increment(1)
			continue
		}
		_, err := c.Create(n.path, n.data, 0, open)
		switch {
		case err == nil:
			rep.Created++
		case errors.Is(err, zk.ErrNodeExists):
			if _, err := c.Set(n.path, n.data, -1); err != nil {
				return fmt.Errorf("write %s: %w", n.path, err)
			}
			rep.Updated++
		default:
			return fmt.Errorf("create %s: %w", n.path, err)
		}
		t.Increment(1)
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if len(nodes[i].acl) == 0 {
			continue
		}
		if _, err := c.SetACL(nodes[i].path, nodes[i].acl, -1); err != nil {
			return fmt.Errorf("set the ACL of %s: %w", nodes[i].path, err)
		}
	}
	return nil
}

// String says what was copied and, plainly, what was not.
func (r *CopyReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "copied %d znodes (%d created, %d overwritten), %d bytes of data\n",
		r.Created+r.Updated, r.Created, r.Updated, r.Bytes)
	b.WriteString("not carried by a live copy (the client protocol cannot):\n")
	b.WriteString("  sessions: clients open new sessions on the target\n")
	fmt.Fprintf(&b, "  ephemeral znodes: %d skipped (they belong to sessions)\n", r.SkippedEphemeral)
	b.WriteString("  stats: czxid, mzxid, pzxid, ctime, mtime, versions and cversion are the target's own\n")
	b.WriteString("    (conditional writes with old versions fail; sequential children are numbered afresh)\n")
	b.WriteString("  node types: containers and TTL nodes were created as persistent znodes\n")
	if r.SkippedSystem > 0 {
		fmt.Fprintf(&b, "  /zookeeper: %d system znodes (config, quotas) left to the target\n", r.SkippedSystem)
	}
	if len(r.Unreadable) > 0 {
		fmt.Fprintf(&b, "  %d znodes the source refused to read (NoAuth; pass --auth): %s\n",
			len(r.Unreadable), strings.Join(r.Unreadable[:min(len(r.Unreadable), 10)], " "))
	}
	if len(r.Redacted) > 0 {
		fmt.Fprintf(&b, "  %d digest ACLs the source hid (no ADMIN on the node; pass --auth with ADMIN rights):\n"+
			"    they were copied as shown (user:x), which only a super user can pass: %s\n",
			len(r.Redacted), strings.Join(r.Redacted[:min(len(r.Redacted), 10)], " "))
	}
	return b.String()
}

// bar is a progress display, or nothing when there is no terminal.
type bar struct{ p progress.Writer }

func newBar(w io.Writer) *bar {
	if w == nil {
		return &bar{}
	}
	p := progress.NewWriter()
	p.SetOutputWriter(w)
	p.SetAutoStop(false)
	p.SetUpdateFrequency(200 * time.Millisecond)
	p.Style().Visibility.ETA = true
	go p.Render()
	return &bar{p: p}
}

func (b *bar) tracker(msg string, total int64) *progress.Tracker {
	t := &progress.Tracker{Message: msg, Total: total, Units: progress.UnitsDefault}
	if b.p != nil {
		b.p.AppendTracker(t)
	}
	return t
}

func (b *bar) stop() {
	if b.p == nil {
		return
	}
	for b.p.IsRenderInProgress() && b.p.LengthActive() > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	b.p.Stop()
}

// isTerminal reports whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
