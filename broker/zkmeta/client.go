package zkmeta

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// Client is the broker's ZooKeeper session: a go-zookeeper connection
// with the chroot of zookeeper.connect applied to every path (go-zookeeper
// has no chroot support of its own).
type Client struct {
	Conn   *zk.Conn
	Events <-chan zk.Event
	chroot string // "" or "/a/b"
	log    *slog.Logger
	sec    Security // how the session is secured (security.go)
}

var OpenACL = zk.WorldACL(zk.PermAll)

// zkLogger routes go-zookeeper's log lines to slog at debug level.
type zkLogger struct{ log *slog.Logger }

func (l zkLogger) Printf(format string, args ...any) {
	l.log.Debug("zookeeper client: " + fmt.Sprintf(format, args...))
}

// Dial connects to "host:port,...[/chroot]" and waits for a session.
func Dial(ctx context.Context, connect string, timeout time.Duration, log *slog.Logger) (*Client, error) {
	return DialSecure(ctx, connect, timeout, log, Security{})
}

// DialSecure is Dial with the session secured by sec. A SASL
// authentication refused before the first session fails the dial, as it
// stops Kafka's start; later ones are logged (go-zookeeper dials again).
func DialSecure(ctx context.Context, connect string, timeout time.Duration, log *slog.Logger, sec Security) (*Client, error) {
	servers, chroot := connect, ""
	if i := strings.IndexByte(connect, '/'); i >= 0 {
		servers, chroot = connect[:i], strings.TrimSuffix(connect[i:], "/")
	}
	authFailed := make(chan error, 1)
	failed := func(err error) {
		log.Error("ZooKeeper SASL authentication failed", "err", err)
		select {
		case authFailed <- err:
		default:
		}
	}
	dial := zk.Dialer(net.DialTimeout)
	if sec.TLS != nil || sec.SASL != nil {
		dial = sec.dialer(failed)
	}
	conn, events, err := zk.Connect(strings.Split(servers, ","), timeout,
		zk.WithLogger(zkLogger{log}), zk.WithLogInfo(false), zk.WithDialer(dial), zk.WithHostProvider(newQuickHosts()))
	if err != nil {
		return nil, err
	}
	z := &Client{Conn: conn, Events: events, chroot: chroot, log: log, sec: sec}
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return z, z.ensureChroot()
			}
		case err := <-authFailed:
			if errors.Is(err, ErrSASLAuthFailed) {
				conn.Close()
				return nil, fmt.Errorf("connecting to ZooKeeper %s: %w", connect, err)
			}
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("connecting to ZooKeeper %s: %w", connect, ctx.Err())
		}
	}
}

// ensureChroot creates the chroot path, as Kafka does on first start.
func (z *Client) ensureChroot() error {
	if z.chroot == "" {
		return nil
	}
	p := ""
	for _, part := range strings.Split(z.chroot[1:], "/") {
		p += "/" + part
		if err := z.createIfMissing(p, z.ACL(p)); err != nil {
			return fmt.Errorf("creating chroot %s: %w", z.chroot, err)
		}
	}
	return nil
}

func (z *Client) Path(p string) string { return z.chroot + p }

func (z *Client) Get(p string) ([]byte, *zk.Stat, error) { return z.Conn.Get(z.Path(p)) }

func (z *Client) GetW(p string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	return z.Conn.GetW(z.Path(p))
}

func (z *Client) Children(p string) ([]string, error) {
	c, _, err := z.Conn.Children(z.Path(p))
	return c, err
}

func (z *Client) ChildrenW(p string) ([]string, <-chan zk.Event, error) {
	c, _, ch, err := z.Conn.ChildrenW(z.Path(p))
	return c, ch, err
}

func (z *Client) Create(p string, data []byte, flags int32) error {
	_, err := z.Conn.Create(z.Path(p), data, flags, z.ACL(p))
	return err
}

func (z *Client) Set(p string, data []byte, version int32) (*zk.Stat, error) {
	return z.Conn.Set(z.Path(p), data, version)
}

func (z *Client) Exists(p string) (bool, error) {
	ok, _, err := z.Conn.Exists(z.Path(p))
	return ok, err
}

// EnsurePersistent creates p (not its parents) if missing. A lost
// connection is retried for up to connectionLossRetry, as Kafka's
// ZooKeeper client retries a request on CONNECTIONLOSS once it has
// reconnected: the create is idempotent here (an existing node is success).
func (z *Client) EnsurePersistent(p string) error {
	if err := z.createIfMissing(z.Path(p), z.ACL(p)); err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	return nil
}

// createIfMissing creates the persistent node at the full path (chroot
// included) unless it exists, retrying a lost connection.
func (z *Client) createIfMissing(full string, acl []zk.ACL) error {
	deadline := time.Now().Add(connectionLossRetry)
	for {
		_, err := z.Conn.Create(full, nil, 0, acl)
		switch {
		case err == nil || errors.Is(err, zk.ErrNodeExists):
			return nil
		case connectionLost(err) && time.Now().Before(deadline):
			time.Sleep(100 * time.Millisecond)
		default:
			return err
		}
	}
}

// connectionLossRetry bounds the retries of an idempotent request whose
// connection was lost.
const connectionLossRetry = 20 * time.Second

// connectionLost reports a request that failed because its connection went
// away (its outcome unknown) rather than by the server's answer.
func connectionLost(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer)
}

// deleteRecursive deletes p and everything under it; a missing node is
// not an error.
func (z *Client) DeleteRecursive(p string) error {
	kids, err := z.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := z.DeleteRecursive(p + "/" + k); err != nil {
			return err
		}
	}
	if err := z.Conn.Delete(z.Path(p), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}

// Multi runs ops (whose paths are chroot-relative) atomically.
func (z *Client) Multi(ops ...any) error {
	_, err := z.MultiAt(ops...)
	return err
}

// MultiAt is Multi that also says which op failed (-1 when the multi
// itself failed), so that a failed version check on /controller_epoch at
// index 0 can be told from a failed CAS on a later op.
func (z *Client) MultiAt(ops ...any) (int, error) {
	for i, op := range ops {
		switch o := op.(type) {
		case *zk.CreateRequest:
			if o.Acl == nil {
				o.Acl = z.ACL(o.Path)
			}
			o.Path = z.Path(o.Path)
		case *zk.SetDataRequest:
			o.Path = z.Path(o.Path)
		case *zk.CheckVersionRequest:
			o.Path = z.Path(o.Path)
		case *zk.DeleteRequest:
			o.Path = z.Path(o.Path)
		default:
			return -1, fmt.Errorf("multi: unsupported op %T at %d", op, i)
		}
	}
	// A failed multi has its reply header's error set too; the per-op
	// results name the op (earlier ones OK, later ones
	// RUNTIMEINCONSISTENCY), so they are read first.
	res, err := z.Conn.Multi(ops...)
	for i, r := range res {
		if r.Error != nil {
			return i, r.Error
		}
	}
	return -1, err
}

func (z *Client) Close() { z.Conn.Close() }
