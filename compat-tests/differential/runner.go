package differential

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Conn is the part of *zk.Conn a run uses. Config.WrapConn can interpose on
// it, for example to prove that the comparison catches an altered reply.
type Conn interface {
	Create(path string, data []byte, flags int32, acl []zk.ACL) (string, error)
	CreateContainer(path string, data []byte, flags int32, acl []zk.ACL) (string, error)
	CreateTTL(path string, data []byte, flags int32, acl []zk.ACL, ttl time.Duration) (string, error)
	Delete(path string, version int32) error
	Exists(path string) (bool, *zk.Stat, error)
	ExistsW(path string) (bool, *zk.Stat, <-chan zk.Event, error)
	Get(path string) ([]byte, *zk.Stat, error)
	GetW(path string) ([]byte, *zk.Stat, <-chan zk.Event, error)
	Children(path string) ([]string, *zk.Stat, error)
	ChildrenW(path string) ([]string, *zk.Stat, <-chan zk.Event, error)
	Set(path string, data []byte, version int32) (*zk.Stat, error)
	GetACL(path string) ([]zk.ACL, *zk.Stat, error)
	SetACL(path string, acl []zk.ACL, version int32) (*zk.Stat, error)
	Multi(ops ...any) ([]zk.MultiResponse, error)
	Sync(path string) (string, error)
	AddAuth(scheme string, auth []byte) error
}

// Config tunes a run. The zero value is usable.
type Config struct {
	// SessionTimeout requested by every session; 0 means 10 s.
	SessionTimeout time.Duration
	// OpTimeout bounds each operation; a run stops at the first operation
	// that takes longer. 0 means 15 s.
	OpTimeout time.Duration
	// WrapConn, when set, wraps the connection of every session opened in
	// a slot (gen counts the sessions opened in that slot so far).
	WrapConn func(slot, gen int, c Conn) Conn
	// NoFinalTree skips the dump of the whole tree after the last op.
	NoFinalTree bool
	// SyncFlush makes every session sync before the read that flushes its
	// watch events. An ensemble needs it: a session's server applies a write
	// made through another server only eventually, and sync is ZooKeeper's
	// way to catch it up.
	SyncFlush bool
	// NormalizeData, when set, rewrites data read from path before it is
	// compared (e.g. the ports in an ensemble's /zookeeper/config).
	NormalizeData func(path string, data []byte) []byte
	// FourLetterWords are sent at the end of the run, while every session
	// and its watches are still there, each answer one more Record
	// (normalized by NormalizeFourLetterWord). nil sends none.
	FourLetterWords []string
	// AlterFourLetterWord, when set, rewrites each four-letter word's
	// answer before it is normalized (the self-test's way to prove that
	// a difference there is caught).
	AlterFourLetterWord func(word, answer string) string
}

func (c Config) sessionTimeout() time.Duration {
	if c.SessionTimeout <= 0 {
		return 10 * time.Second
	}
	return c.SessionTimeout
}

func (c Config) opTimeout() time.Duration {
	if c.OpTimeout <= 0 {
		return 15 * time.Second
	}
	return c.OpTimeout
}

// Record is the normalized outcome of one operation: a few "key: value"
// lines, compared line by line.
type Record struct {
	Index int
	Op    string
	Lines []string
}

// Trace is the outcome of a run against one server.
type Trace struct {
	Name     string // label used in diffs, e.g. "apache"
	Addr     string
	Records  []Record
	Err      error // why the run stopped early, or nil
	Duration time.Duration
}

// session is one slot's current ZooKeeper session.
type session struct {
	slot, gen int
	label     string
	raw       *zk.Conn
	conn      Conn

	mu     sync.Mutex
	events []string // received since the last take, in arrival order
}

func (s *session) record(ev zk.Event) {
	var e string
	switch {
	case ev.Type == zk.EventSession && (ev.State == zk.StateDisconnected || ev.State == zk.StateExpired):
		e = ev.State.String()
	case ev.Type == zk.EventSession || ev.Type == zk.EventNotWatching:
		// Connection progress and client-made NotWatching events (sent in
		// map order) are not server replies.
		return
	default:
		e = fmt.Sprintf("%s %s", strings.TrimPrefix(ev.Type.String(), "Event"), ev.Path)
	}
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

func (s *session) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.events
	s.events = nil
	return e
}

// runner executes ops against one server. It is used by one goroutine.
type runner struct {
	cfg      Config
	addr     string
	sessions [NumSessions]*session
	gens     [NumSessions]int
	owners   map[int64]string // session id -> slot label
	ranks    map[int64]int    // zxid -> rank of first appearance
	paths    []string         // path returned by op i, "" if none
	start    time.Time
}

// Run executes ops against the server at addr and returns its trace. ctx
// bounds the whole run.
func Run(ctx context.Context, name, addr string, ops []Op, cfg Config) *Trace {
	t := &Trace{Name: name, Addr: addr}
	r := &runner{cfg: cfg, addr: addr, owners: map[int64]string{}, ranks: map[int64]int{}, start: time.Now()}
	defer func() {
		for _, s := range r.sessions {
			if s != nil {
				s.raw.Close()
			}
		}
		t.Duration = time.Since(r.start)
	}()
	for slot := range NumSessions {
		if err := r.open(slot); err != nil {
			t.Err = err
			return t
		}
	}
	r.paths = make([]string, len(ops))
	for i, op := range ops {
		if err := ctx.Err(); err != nil {
			t.Err = fmt.Errorf("stopped before op #%d: %w", i, err)
			return t
		}
		var lines []string
		err := r.bounded(func() { lines = r.exec(i, op) })
		if err != nil {
			t.Err = fmt.Errorf("op #%d %s: %w", i, op, err)
			return t
		}
		if op.Kind.writes() {
			if err := r.bounded(r.flush); err != nil {
				t.Err = fmt.Errorf("flushing watch events after op #%d: %w", i, err)
				return t
			}
		}
		lines = append(lines, r.takeEvents()...)
		t.Records = append(t.Records, Record{Index: i, Op: op.String(), Lines: lines})
	}
	if !cfg.NoFinalTree {
		var lines []string
		if err := r.bounded(func() { lines = r.tree() }); err != nil {
			t.Err = fmt.Errorf("final tree: %w", err)
			return t
		}
		t.Records = append(t.Records, Record{Index: len(ops), Op: "final tree (read by s0)", Lines: lines})
	}
	if len(cfg.FourLetterWords) > 0 {
		var recs []Record
		var err error
		if berr := r.bounded(func() { recs, err = r.fourLetterRecords(len(t.Records)) }); berr != nil {
			err = berr
		}
		t.Records = append(t.Records, recs...)
		if err != nil {
			t.Err = err
		}
	}
	return t
}

// RunPair runs ops against two servers at the same time.
func RunPair(ctx context.Context, nameA, addrA, nameB, addrB string, ops []Op, cfgA, cfgB Config) (a, b *Trace) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a = Run(ctx, nameA, addrA, ops, cfgA) }()
	go func() { defer wg.Done(); b = Run(ctx, nameB, addrB, ops, cfgB) }()
	wg.Wait()
	return a, b
}

var errOpTimeout = errors.New("no reply within the op timeout")

// bounded runs f, giving up after the op timeout (f's goroutine is then
// left to the connection close at the end of the run).
func (r *runner) bounded(f func()) error {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return nil
	case <-time.After(r.cfg.opTimeout()):
		return errOpTimeout
	}
}

var quietLogger = log.New(io.Discard, "", 0)

// open starts a new session in slot.
func (r *runner) open(slot int) error {
	s := &session{slot: slot, gen: r.gens[slot], label: fmt.Sprintf("s%dg%d", slot, r.gens[slot])}
	r.gens[slot]++
	// A comma-separated address is an ensemble: go-zookeeper shuffles
	// the servers per session, so sessions spread over them.
	raw, ech, err := zk.Connect(strings.Split(r.addr, ","), r.cfg.sessionTimeout(),
		zk.WithLogger(quietLogger), zk.WithLogInfo(false), zk.WithEventCallback(s.record))
	if err != nil {
		return fmt.Errorf("connect %s: %w", s.label, err)
	}
	timeout := time.After(r.cfg.opTimeout())
	for raw.State() != zk.StateHasSession {
		select {
		case <-ech:
		case <-timeout:
			raw.Close()
			return fmt.Errorf("session %s: not established within %v (state %v)", s.label, r.cfg.opTimeout(), raw.State())
		}
	}
	s.raw, s.conn = raw, Conn(raw)
	if r.cfg.WrapConn != nil {
		s.conn = r.cfg.WrapConn(slot, s.gen, s.conn)
	}
	r.owners[raw.SessionID()] = s.label
	r.sessions[slot] = s
	return nil
}

// flush sends one read on every session, so that every watch event caused
// by the previous operation has arrived (see the package doc).
func (r *runner) flush() {
	for _, s := range r.sessions {
		if s != nil {
			if r.cfg.SyncFlush {
				_, _ = s.raw.Sync("/")
			}
			_, _, _ = s.raw.Exists("/")
		}
	}
}

func (r *runner) takeEvents() []string {
	var lines []string
	for _, s := range r.sessions {
		if s == nil {
			continue
		}
		if ev := s.take(); len(ev) > 0 {
			lines = append(lines, fmt.Sprintf("events %s: %s", s.label, strings.Join(ev, ", ")))
		}
	}
	return lines
}

func (r *runner) path(op Op) string {
	if op.Ref >= 0 && op.Ref < len(r.paths) && r.paths[op.Ref] != "" {
		return r.paths[op.Ref]
	}
	return op.Path
}

// exec runs one operation and renders its outcome.
func (r *runner) exec(i int, op Op) []string {
	s := r.sessions[op.Session]
	c := s.conn
	p := r.path(op)
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if p != op.Path {
		add("target: path of #%d", op.Ref)
	}
	switch op.Kind {
	case OpCreate:
		got, err := r.create(c, s, op, p)
		add("err: %s", errString(err))
		if err == nil {
			r.paths[i] = got
			add("path: %s", got)
		}
	case OpDelete:
		add("err: %s", errString(c.Delete(p, op.Version)))
	case OpSet:
		st, err := c.Set(p, op.Data, op.Version)
		add("err: %s", errString(err))
		if err == nil {
			add("stat: %s", r.stat(st))
		}
	case OpExists:
		var ok bool
		var st *zk.Stat
		var err error
		if op.Watch {
			ok, st, _, err = c.ExistsW(p)
		} else {
			ok, st, err = c.Exists(p)
		}
		add("err: %s", errString(err))
		if err == nil {
			add("exists: %v", ok)
			if ok {
				add("stat: %s", r.stat(st))
			}
		}
	case OpGet:
		var d []byte
		var st *zk.Stat
		var err error
		if op.Watch {
			d, st, _, err = c.GetW(p)
		} else {
			d, st, err = c.Get(p)
		}
		add("err: %s", errString(err))
		if err == nil {
			add("data: %s", dataString(r.normalize(p, d)))
			add("stat: %s", r.stat(st))
		}
	case OpChildren:
		var ch []string
		var st *zk.Stat
		var err error
		if op.Watch {
			ch, st, _, err = c.ChildrenW(p)
		} else {
			ch, st, err = c.Children(p)
		}
		add("err: %s", errString(err))
		if err == nil {
			ch = slices.Clone(ch)
			slices.Sort(ch)
			add("children: %s", strings.Join(ch, " "))
			add("stat: %s", r.stat(st))
		}
	case OpGetACL:
		acl, st, err := c.GetACL(p)
		add("err: %s", errString(err))
		if err == nil {
			add("acl: %s", aclString(acl))
			add("stat: %s", r.stat(st))
		}
	case OpSetACL:
		st, err := c.SetACL(p, aclSet(op.ACL), op.Version)
		add("err: %s", errString(err))
		if err == nil {
			add("stat: %s", r.stat(st))
		}
	case OpSync:
		got, err := c.Sync(p)
		add("err: %s", errString(err))
		if err == nil {
			add("path: %s", got)
		}
	case OpAddAuth:
		add("err: %s", errString(c.AddAuth("digest", []byte(credentials[op.Auth]))))
	case OpReopen:
		old := s.label
		s.raw.Close()
		r.sessions[op.Session] = nil
		// The closed session's own events (if any arrived) are not
		// compared: the client invalidates its watches in map order.
		s.take()
		r.flush() // let the others see the ephemerals go
		lines := r.takeEvents()
		if err := r.open(op.Session); err != nil {
			add("err: %v", err)
		} else {
			add("err: ok (closed %s, opened %s)", old, r.sessions[op.Session].label)
		}
		out = append(out, lines...)
	case OpMulti:
		out = append(out, r.multi(c, op)...)
	}
	return out
}

func (r *runner) create(c Conn, s *session, op Op, p string) (string, error) {
	acl := aclSet(op.ACL)
	switch op.Mode {
	case ModeContainer:
		return c.CreateContainer(p, op.Data, zk.FlagContainer, acl)
	case ModeTTL, ModeTTLSeq:
		return c.CreateTTL(p, op.Data, int32(op.Mode), acl, time.Duration(op.TTL)*time.Millisecond)
	default:
		return c.Create(p, op.Data, int32(op.Mode), acl)
	}
}

func (r *runner) multi(c Conn, op Op) []string {
	reqs := make([]any, 0, len(op.Sub))
	for _, sub := range op.Sub {
		p := r.path(sub)
		switch sub.Kind {
		case OpCreate:
			reqs = append(reqs, &zk.CreateRequest{Path: p, Data: sub.Data, Acl: aclSet(sub.ACL), Flags: int32(sub.Mode)})
		case OpSet:
			reqs = append(reqs, &zk.SetDataRequest{Path: p, Data: sub.Data, Version: sub.Version})
		case OpDelete:
			reqs = append(reqs, &zk.DeleteRequest{Path: p, Version: sub.Version})
		case OpCheck:
			reqs = append(reqs, &zk.CheckVersionRequest{Path: p, Version: sub.Version})
		}
	}
	res, err := c.Multi(reqs...)
	out := []string{"err: " + errString(err)}
	if len(res) != len(op.Sub) {
		out = append(out, fmt.Sprintf("results: %d for %d ops", len(res), len(op.Sub)))
	}
	for k, mr := range res {
		line := fmt.Sprintf("[%d] err: %s", k, errString(mr.Error))
		if mr.String != "" {
			line += " path: " + mr.String
		}
		if mr.Stat != nil {
			line += " stat: " + r.stat(mr.Stat)
		}
		if k < len(op.Sub) && op.Sub[k].Ref >= 0 && r.path(op.Sub[k]) != op.Sub[k].Path {
			line += fmt.Sprintf(" (target: path of #%d)", op.Sub[k].Ref)
		}
		out = append(out, line)
	}
	return out
}

// tree reads every znode from / with session 0: data, stat, ACL, children.
func (r *runner) tree() []string {
	c := r.sessions[0].raw
	var out []string
	var walk func(p string, depth int)
	walk = func(p string, depth int) {
		if depth > 20 || len(out) > 5000 {
			out = append(out, p+" (walk truncated)")
			return
		}
		d, st, err := c.Get(p)
		if err != nil {
			out = append(out, fmt.Sprintf("%s get err: %s", p, errString(err)))
		} else {
			out = append(out, fmt.Sprintf("%s data=%s stat: %s", p, dataString(r.normalize(p, d)), r.stat(st)))
		}
		if acl, _, err := c.GetACL(p); err != nil {
			out = append(out, fmt.Sprintf("%s acl err: %s", p, errString(err)))
		} else {
			out = append(out, fmt.Sprintf("%s acl: %s", p, aclString(acl)))
		}
		ch, _, err := c.Children(p)
		if err != nil {
			out = append(out, fmt.Sprintf("%s children err: %s", p, errString(err)))
			return
		}
		ch = slices.Clone(ch)
		slices.Sort(ch)
		for _, name := range ch {
			if p == "/" {
				walk("/"+name, depth+1)
			} else {
				walk(p+"/"+name, depth+1)
			}
		}
	}
	walk("/", 0)
	return out
}

// zxid renders a zxid as its rank of first appearance in this run.
func (r *runner) zxid(z int64) string {
	if z == 0 {
		return "0"
	}
	k, ok := r.ranks[z]
	if !ok {
		k = len(r.ranks) + 1
		r.ranks[z] = k
	}
	return fmt.Sprintf("Z%d", k)
}

// when checks a ctime or mtime: 0 and times within the run are fine.
func (r *runner) when(ms int64) string {
	if ms == 0 {
		return "0"
	}
	t := time.UnixMilli(ms)
	if t.Before(r.start.Add(-10*time.Second)) || t.After(time.Now().Add(10*time.Second)) {
		return fmt.Sprintf("t?(%d)", ms)
	}
	return "t"
}

func (r *runner) owner(id int64) string {
	if id == 0 {
		return "0"
	}
	if l, ok := r.owners[id]; ok {
		return l
	}
	return "unknown-session"
}

func (r *runner) stat(st *zk.Stat) string {
	if st == nil {
		return "nil"
	}
	return fmt.Sprintf("czxid=%s mzxid=%s pzxid=%s ctime=%s mtime=%s version=%d cversion=%d aversion=%d owner=%s dataLength=%d numChildren=%d",
		r.zxid(st.Czxid), r.zxid(st.Mzxid), r.zxid(st.Pzxid), r.when(st.Ctime), r.when(st.Mtime),
		st.Version, st.Cversion, st.Aversion, r.owner(st.EphemeralOwner), st.DataLength, st.NumChildren)
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// aclSet returns the ACL list an operation names.
func aclSet(k int) []zk.ACL {
	switch k {
	case ACLWorldRead:
		return zk.WorldACL(zk.PermRead)
	case ACLAliceAll:
		return zk.DigestACL(zk.PermAll, "alice", "secret")
	case ACLAliceAdminWorldRead:
		return append(zk.DigestACL(zk.PermAdmin|zk.PermWrite, "alice", "secret"), zk.WorldACL(zk.PermRead)...)
	case ACLAuthAll:
		return zk.AuthACL(zk.PermAll)
	case ACLEmpty:
		return []zk.ACL{}
	case ACLWorldCreateOnly:
		return zk.WorldACL(zk.PermCreate | zk.PermRead)
	default:
		return zk.WorldACL(zk.PermAll)
	}
}

func aclString(acl []zk.ACL) string {
	parts := make([]string, len(acl))
	for i, a := range acl {
		parts[i] = fmt.Sprintf("%d:%s:%s", a.Perms, a.Scheme, a.ID)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// normalize applies Config.NormalizeData.
func (r *runner) normalize(path string, data []byte) []byte {
	if r.cfg.NormalizeData == nil || data == nil {
		return data
	}
	return r.cfg.NormalizeData(path, data)
}
