package quorum

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// TestPipeline runs the request pipeline scripts in testdata/pipeline:
// real Servers (conn, handshake, requests, reads, apply, watches) over a
// fakeLog, driven by clients that speak the wire protocol over net.Pipe.
// Rewrite the expected output with -rewrite. The commands:
//
//	server id=N [ensemble]          a server with myid N; ensemble: an ensemble member (leader 1)
//	leader id=N                     every ensemble member now knows leader N (0: none)
//	connect client=C server=N [resume=D] [readonly] [zxid=Z] [badpassword]
//	                                C's handshake; resume: with D's session id and password;
//	                                zxid: the last zxid the client has seen
//	send client=C                   one request a line: "<xid> <op> <args>" (see parseRequest)
//	replies client=C [n=K] [within=D]
//	                                wait for K frames (default 1) from the server to C; within:
//	                                wait only D (for a step where nothing may arrive)
//	closed client=C                 wait for C's connection to end; show what came before
//	hold | release                  hold new proposals | commit every held one and stop holding
//	commit [n=K]                    apply the K oldest held proposals (waits for them to be made)
//	fail [dropped] [applied]        end the oldest held proposal with "outcome unknown"
//	                                (or "dropped"); applied: it is in the log all the same
//	readindex [fail]                make ReadIndex fail (or succeed again)
//	expire client=C                 propose the close of C's session, as the leader's expiry does
//	stall server=N path=P           a watch on P whose notification stalls the apply that fires
//	                                it, until unstall (it is notified before every session's)
//	stalled | unstall               wait until an apply is stalled | let it go on
//	get server=N path=P             the data of P in server N's tree
func TestPipeline(t *testing.T) {
	datadriven.Walk(t, "testdata/pipeline", func(t *testing.T, path string) {
		env := newPipelineEnv()
		datadriven.RunTest(t, path, env.handle)
	})
}

// pipelineEnv is the state of one script.
type pipelineEnv struct {
	log      *fakeLog
	servers  map[uint64]*Server
	clients  map[string]*testClient
	sent     map[string]int64 // requests sent per client
	conns    map[string]zkproto.ConnectResponse
	sessions map[int64]string // session id → s1, s2… in order of appearance
	stall    *stallingWatcher
}

// stallingWatcher is a watcher whose notification blocks until unstall:
// the apply that fires it stops between updating the tree and notifying
// the sessions' watchers (its session id, -1, sorts first).
type stallingWatcher struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (w *stallingWatcher) notify(zkproto.EventType, string, []zkproto.ACL, int64) {
	close(w.entered)
	<-w.release
}
func (w *stallingWatcher) sessionID() int64 { return -1 }
func (w *stallingWatcher) unstall()         { w.once.Do(func() { close(w.release) }) }

func newPipelineEnv() *pipelineEnv {
	return &pipelineEnv{log: &fakeLog{}, servers: map[uint64]*Server{},
		clients: map[string]*testClient{}, sent: map[string]int64{},
		conns: map[string]zkproto.ConnectResponse{}, sessions: map[int64]string{}}
}

func (e *pipelineEnv) handle(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "server":
		return e.cmdServer(t, d)
	case "leader":
		var id uint64
		d.ScanArgs(t, "id", &id)
		for _, s := range e.servers {
			setLeader(s, id)
		}
		return ""
	case "connect":
		return e.cmdConnect(t, d)
	case "send":
		return e.cmdSend(t, d)
	case "replies":
		n := 1
		if d.HasArg("n") {
			d.ScanArgs(t, "n", &n)
		}
		within := waitLimit
		if d.HasArg("within") {
			var text string
			d.ScanArgs(t, "within", &text)
			var err error
			if within, err = time.ParseDuration(text); err != nil {
				d.Fatalf(t, "within: %v", err)
			}
		}
		return prefixed(d, e.client(t, d).next(n, within))
	case "closed":
		return prefixed(d, e.client(t, d).untilClosed())
	case "hold", "release":
		e.log.setHold(d.Cmd == "hold")
		if d.Cmd == "release" {
			return errText(e.log.commit(e.log.pendingCount()))
		}
		return ""
	case "commit":
		n := 1
		if d.HasArg("n") {
			d.ScanArgs(t, "n", &n)
		}
		checkFor(t, fmt.Sprintf("%d proposals", n), func() bool { return e.log.pendingCount() >= n })
		return errText(e.log.commit(n))
	case "fail":
		err := raftnode.ErrOutcomeUnknown
		if d.HasArg("dropped") {
			err = raftnode.ErrProposalDropped
		}
		checkFor(t, "a proposal", func() bool { return e.log.pendingCount() >= 1 })
		return errText(e.log.fail(err, d.HasArg("applied")))
	case "expire":
		// The txn expireSessions proposes for a session gone quiet.
		c := e.client(t, d)
		id := c.serverConn().sessionID()
		txn := znode.Txn{Time: time.Now().UnixMilli(), Session: id, Ops: []znode.Op{{Type: zkproto.OpCloseSession}}}
		c.srv.repl.ProposeAsync(txn.Append(nil))
		return ""
	case "stall":
		var id uint64
		var path string
		d.ScanArgs(t, "server", &id)
		d.ScanArgs(t, "path", &path)
		e.stall = &stallingWatcher{entered: make(chan struct{}), release: make(chan struct{})}
		e.servers[id].watches.add(watchData, path, e.stall)
		st := e.stall
		t.Cleanup(st.unstall) // before the servers shut down
		return ""
	case "stalled":
		select {
		case <-e.stall.entered:
		case <-time.After(waitLimit):
			d.Fatalf(t, "no apply stalled")
		}
		return ""
	case "unstall":
		e.stall.unstall()
		return ""
	case "readindex":
		var err error
		if d.HasArg("fail") {
			err = errors.New("no leader")
		}
		e.log.setReadIndexErr(err)
		return ""
	case "get":
		var id uint64
		var path string
		d.ScanArgs(t, "server", &id)
		d.ScanArgs(t, "path", &path)
		data, st, zerr := e.servers[id].tree.Load().Get(path)
		if zerr != zkproto.ErrOK {
			return zerr.Error()
		}
		return fmt.Sprintf("data=%q version=%d mzxid=%d", data, st.Version, st.Mzxid)
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

func errText(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return ""
}

// cmdServer builds a Server whose replicator is a member of the script's
// fakeLog. Nothing of Start runs: no disk, no raft, no timers.
func (e *pipelineEnv) cmdServer(t *testing.T, d *datadriven.TestData) string {
	var id uint64
	d.ScanArgs(t, "id", &id)
	cfg := DefaultConfig(t.TempDir())
	cfg.MyID = id
	s := newServer(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	s.tree.Store(znode.New(s.treeOptions()))
	if d.HasArg("ensemble") {
		ens := &ensemble{kick: make(chan struct{}, 1)}
		ens.mu.touches = map[int64]time.Duration{}
		s.ens = ens
		setLeader(s, 1)
	}
	e.log.join(s)
	e.servers[id] = s
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown of server %d: %v", id, err)
		}
	})
	return ""
}

// setLeader tells an ensemble member who leads, as raftnode's
// OnStateChange does.
func setLeader(s *Server, leader uint64) {
	if s.ens == nil {
		return
	}
	role := raftnode.RoleFollower
	if leader == s.cfg.MyID {
		role = raftnode.RoleLeader
	}
	s.stateChanged(leader, role)
}

func (e *pipelineEnv) cmdConnect(t *testing.T, d *datadriven.TestData) string {
	var name string
	var id uint64
	d.ScanArgs(t, "client", &name)
	d.ScanArgs(t, "server", &id)
	req := zkproto.ConnectRequest{TimeOut: 6000, Passwd: make([]byte, 16), HasReadOnly: true, ReadOnly: d.HasArg("readonly")}
	if d.HasArg("resume") {
		var other string
		d.ScanArgs(t, "resume", &other)
		prev := e.conns[other]
		req.SessionID, req.Passwd = prev.SessionID, prev.Passwd
	}
	if d.HasArg("badpassword") {
		req.Passwd = make([]byte, 16)
	}
	if d.HasArg("zxid") {
		d.ScanArgs(t, "zxid", &req.LastZxidSeen)
	}
	c := dial(t, e.servers[id])
	e.clients[name] = c
	e.sent[name] = 0
	resp, ok := c.connect(req)
	if !ok {
		return name + ": closed"
	}
	e.conns[name] = resp
	if resp.SessionID == 0 {
		return fmt.Sprintf("%s: session expired (id 0, timeout %d)", name, resp.TimeOut)
	}
	out := fmt.Sprintf("%s: session %s timeout=%d", name, e.sessionName(resp.SessionID), resp.TimeOut)
	if resp.ReadOnly {
		out += " readonly"
	}
	return out
}

func (e *pipelineEnv) sessionName(id int64) string {
	if n, ok := e.sessions[id]; ok {
		return n
	}
	n := fmt.Sprintf("s%d", len(e.sessions)+1)
	e.sessions[id] = n
	return n
}

// cmdSend writes the requests, then waits until the server has read them
// all, so that what the script does next happens after they are queued.
func (e *pipelineEnv) cmdSend(t *testing.T, d *datadriven.TestData) string {
	var name string
	d.ScanArgs(t, "client", &name)
	c := e.client(t, d)
	sc := c.serverConn()
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		xid, op, rec, err := parseRequest(line)
		if err != nil {
			d.Fatalf(t, "%s: %v", line, err)
		}
		c.send(xid, op, rec)
		e.sent[name]++
	}
	if sc != nil {
		want := e.sent[name]
		checkFor(t, "the server to read the requests", func() bool { return sc.received.Load() >= want })
	}
	return ""
}

func (e *pipelineEnv) client(t *testing.T, d *datadriven.TestData) *testClient {
	var name string
	d.ScanArgs(t, "client", &name)
	c, ok := e.clients[name]
	if !ok {
		d.Fatalf(t, "no client %q", name)
	}
	return c
}

// prefixed shows lines as the frames client=C got, one a line.
func prefixed(d *datadriven.TestData, lines []string) string {
	var name string
	for _, a := range d.CmdArgs {
		if a.Key == "client" && len(a.Vals) == 1 {
			name = a.Vals[0]
		}
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s: %s\n", name, l)
	}
	return b.String()
}

// parseRequest reads "<xid> <op> <args>":
//
//	create PATH [DATA] [ephemeral]    get PATH [watch]     exists PATH [watch]
//	set PATH DATA                     children PATH [watch] delete PATH
//	sync PATH                         ping                 close
//	setwatches RELZXID DATA EXIST CHILD (comma-separated paths, or -)
func parseRequest(line string) (int32, zkproto.OpCode, zkproto.Record, error) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0, 0, nil, errors.New("want <xid> <op> <args>")
	}
	xid, err := strconv.ParseInt(f[0], 10, 32)
	if err != nil {
		return 0, 0, nil, err
	}
	args := f[2:]
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	has := func(flag string) bool {
		for _, a := range args {
			if a == flag {
				return true
			}
		}
		return false
	}
	x := int32(xid)
	switch f[1] {
	case "create":
		req := &zkproto.CreateRequest{Path: arg(0), ACL: zkproto.OpenACLUnsafe}
		if d := arg(1); d != "" && d != "ephemeral" {
			req.Data = []byte(d)
		}
		if has("ephemeral") {
			req.Flags = zkproto.ModeEphemeral
		}
		return x, zkproto.OpCreate, req, nil
	case "get":
		return x, zkproto.OpGetData, &zkproto.GetDataRequest{Path: arg(0), Watch: has("watch")}, nil
	case "exists":
		return x, zkproto.OpExists, &zkproto.ExistsRequest{Path: arg(0), Watch: has("watch")}, nil
	case "set":
		return x, zkproto.OpSetData, &zkproto.SetDataRequest{Path: arg(0), Data: []byte(arg(1)), Version: -1}, nil
	case "children":
		return x, zkproto.OpGetChildren, &zkproto.GetChildrenRequest{Path: arg(0), Watch: has("watch")}, nil
	case "delete":
		return x, zkproto.OpDelete, &zkproto.DeleteRequest{Path: arg(0), Version: -1}, nil
	case "sync":
		return x, zkproto.OpSync, &zkproto.SyncRequest{Path: arg(0)}, nil
	case "setwatches":
		// setwatches RELZXID DATA EXIST CHILD, each a comma-separated list or -.
		rel, err := strconv.ParseInt(arg(0), 10, 64)
		if err != nil {
			return 0, 0, nil, err
		}
		paths := func(i int) []string {
			if a := arg(i); a != "" && a != "-" {
				return strings.Split(a, ",")
			}
			return nil
		}
		return x, zkproto.OpSetWatches, &zkproto.SetWatches{RelativeZxid: rel,
			DataWatches: paths(1), ExistWatches: paths(2), ChildWatches: paths(3)}, nil
	case "ping":
		return x, zkproto.OpPing, nil, nil
	case "close":
		return x, zkproto.OpCloseSession, nil, nil
	}
	return 0, 0, nil, fmt.Errorf("unknown op %q", f[1])
}
