package broker

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestGroupMachine runs the scripts in testdata/group against the pure
// group state machine with a fake clock. Commands (client names stand
// for members; a client's member id and generation are the ones its
// last join answered, unless given):
//
//	config [delay=3s] [max=N] [session=10s] [rebalance=20s]
//	                                restart with group.initial.rebalance.delay.ms, group.max.size
//	                                and the timeouts of joins that do not give theirs
//	join a [member=ID|none] [instance=I] [protocols=range,sticky] [meta=M] [type=consumer]
//	       [session=10s] [rebalance=20s] [v=5]
//	sync a [gen=N] [member=ID] [instance=I] [assign=a:x,b:y]
//	heartbeat a [gen=N] [member=ID] [instance=I]
//	commit a [gen=N] [member=ID] [instance=I]     (commit gen=-1: no member)
//	leave a [member=ID] [instance=I]               (leave instance=I: by instance id alone)
//	unload                                         the group goes Dead (coordinated elsewhere)
//	advance 5s                                     fire the timers due, in order
//	state                                          the group as it is
//
// Each command prints the replies it released, the timers that fired
// and the metadata stores it asked for.
func TestGroupMachine(t *testing.T) {
	datadriven.Walk(t, "testdata/group", func(t *testing.T, path string) {
		e := newMachineEnv(machineConfig{})
		datadriven.RunTest(t, path, e.handle)
	})
}

type machineEnv struct {
	m       groupMachine
	now     time.Duration // since the script began
	ids     int
	member  map[string]string // client → member id
	gen     map[string]int32  // client → generation
	waiting map[replyTo]string
	next    replyTo
	timers  map[timerKey]armed
	out     []string
	// session, rebalance: the timeouts of a join that does not give them.
	session, rebalance time.Duration
}

type armed struct {
	at  time.Duration
	seq uint64
}

func newMachineEnv(cfg machineConfig) *machineEnv {
	e := &machineEnv{member: map[string]string{}, gen: map[string]int32{},
		waiting: map[replyTo]string{}, timers: map[timerKey]armed{},
		session: 10 * time.Second, rebalance: 20 * time.Second}
	e.m = newGroupMachine(cfg, func(prefix string) string {
		e.ids++
		return prefix + "-" + strconv.Itoa(e.ids)
	}, nil, e.clock())
	return e
}

func (e *machineEnv) clock() time.Time { return time.Unix(0, 0).Add(e.now) }

func (e *machineEnv) handle(t *testing.T, d *datadriven.TestData) string {
	e.out = nil
	args := map[string]string{}
	var pos []string
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			pos = append(pos, a.Key)
		} else {
			args[a.Key] = strings.Join(a.Vals, ",")
		}
	}
	client := ""
	if len(pos) > 0 {
		client = pos[0]
	}
	switch d.Cmd {
	case "config":
		cfg := machineConfig{initialRebalanceDelay: durArg(t, args, "delay", 0)}
		if v, ok := args["max"]; ok {
			n, _ := strconv.Atoi(v)
			cfg.maxSize = int32(n)
		}
		*e = *newMachineEnv(cfg)
		e.session = durArg(t, args, "session", e.session)
		e.rebalance = durArg(t, args, "rebalance", e.rebalance)
		return "ok"
	case "join":
		e.join(t, client, args)
	case "sync":
		e.sync(t, client, args)
	case "heartbeat":
		code := e.m.heartbeat(e.memberArg(client, args), args["instance"], e.genArg(t, client, args))
		e.printf("heartbeat %s: %s", client, codeName(code))
	case "commit":
		code := e.m.commitCheck(e.memberArg(client, args), args["instance"], e.genArg(t, client, args))
		e.printf("commit %s: %s", client, codeName(code))
	case "leave":
		code := e.m.leave(e.clock(), e.memberArg(client, args), args["instance"], "script")
		e.printf("leave %s: %s", client+args["instance"], codeName(code))
	case "unload":
		e.m.die(kerr.NotCoordinator.Code)
	case "advance":
		e.advance(t, pos)
	case "state":
		return e.state()
	default:
		t.Fatalf("unknown command %q", d.Cmd)
	}
	e.apply()
	if len(e.out) == 0 {
		return "ok"
	}
	return strings.Join(e.out, "\n")
}

func (e *machineEnv) printf(format string, a ...any) {
	e.out = append(e.out, fmt.Sprintf(format, a...))
}

func (e *machineEnv) wait(what string) replyTo {
	e.next++
	e.waiting[e.next] = what
	return e.next
}

func (e *machineEnv) memberArg(client string, args map[string]string) string {
	if v, ok := args["member"]; ok {
		if v == "none" {
			return ""
		}
		return v
	}
	return e.member[client]
}

func (e *machineEnv) genArg(t *testing.T, client string, args map[string]string) int32 {
	if v, ok := args["gen"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("gen=%s: %v", v, err)
		}
		return int32(n)
	}
	return e.gen[client]
}

func durArg(t *testing.T, args map[string]string, k string, def time.Duration) time.Duration {
	v, ok := args[k]
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s=%s: %v", k, v, err)
	}
	return d
}

func (e *machineEnv) join(t *testing.T, client string, args map[string]string) {
	j := joinInput{memberID: e.memberArg(client, args), instanceID: args["instance"], clientID: client,
		host: "/127.0.0.1", protocolType: "consumer", version: 5,
		session: durArg(t, args, "session", e.session), rebalance: durArg(t, args, "rebalance", e.rebalance)}
	if v, ok := args["type"]; ok {
		j.protocolType = v
	}
	if v, ok := args["v"]; ok {
		n, _ := strconv.Atoi(v)
		j.version = int16(n)
	}
	meta := client
	if v, ok := args["meta"]; ok {
		meta = v
	}
	protos := "range"
	if v, ok := args["protocols"]; ok {
		protos = v
	}
	for _, p := range strings.Split(protos, ",") {
		j.protocols = append(j.protocols, kmsg.JoinGroupRequestProtocol{Name: p, Metadata: []byte(meta)})
	}
	e.m.join(e.clock(), j, e.wait("join "+client))
}

func (e *machineEnv) sync(t *testing.T, client string, args map[string]string) {
	s := syncInput{memberID: e.memberArg(client, args), instanceID: args["instance"], generation: e.genArg(t, client, args)}
	if v, ok := args["assign"]; ok {
		for _, kv := range strings.Split(v, ",") {
			who, what, _ := strings.Cut(kv, ":")
			id := e.member[who]
			if id == "" {
				id = who
			}
			s.assignments = append(s.assignments, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: []byte(what)})
		}
	}
	e.m.sync(e.clock(), s, e.wait("sync "+client))
}

// advance moves the clock, firing each timer at its deadline.
func (e *machineEnv) advance(t *testing.T, pos []string) {
	if len(pos) != 1 {
		t.Fatal("advance takes a duration")
	}
	d, err := time.ParseDuration(pos[0])
	if err != nil {
		t.Fatal(err)
	}
	end := e.now + d
	for {
		var next *timerKey
		for k, a := range e.timers {
			if a.at > end {
				continue
			}
			if next == nil || a.at < e.timers[*next].at || a.at == e.timers[*next].at && timerLess(k, *next) {
				k := k
				next = &k
			}
		}
		if next == nil {
			break
		}
		a := e.timers[*next]
		delete(e.timers, *next)
		e.now = a.at
		e.printf("%s: %s timer fired", fmtDur(e.now), timerName(*next))
		e.m.fire(e.clock(), *next, a.seq)
		e.apply()
	}
	e.now = end
}

func timerLess(a, b timerKey) bool {
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.member < b.member
}

func timerName(k timerKey) string {
	if k.member == "" {
		return k.kind.String()
	}
	return k.kind.String() + " " + k.member
}

func fmtDur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.String()
}

// apply plays the shell: it drains the machine and prints the replies.
func (e *machineEnv) apply() {
	fx := e.m.drain()
	for _, op := range fx.timers {
		if op.stop {
			delete(e.timers, op.key)
		} else {
			e.timers[op.key] = armed{at: e.now + op.after, seq: op.seq}
		}
	}
	if fx.store {
		e.printf("store: generation %d, %s", e.m.generation, e.m.state)
	}
	for _, j := range fx.joins {
		what := e.waiting[j.to]
		delete(e.waiting, j.to)
		client := strings.TrimPrefix(what, "join ")
		r := j.resp
		if r.ErrorCode == 0 || r.ErrorCode == kerr.MemberIDRequired.Code {
			e.member[client] = r.MemberID
		}
		if r.ErrorCode != 0 {
			e.printf("%s: %s member=%s", what, codeName(r.ErrorCode), r.MemberID)
			continue
		}
		e.gen[client] = r.Generation
		line := fmt.Sprintf("%s: generation %d member=%s leader=%s protocol=%s", what, r.Generation, r.MemberID, r.LeaderID, *r.Protocol)
		if len(r.Members) > 0 {
			var ms []string
			for _, m := range r.Members {
				ms = append(ms, m.MemberID+":"+string(m.ProtocolMetadata))
			}
			line += " members=" + strings.Join(ms, ",")
		}
		if r.SkipAssignment {
			line += " skip-assignment"
		}
		e.out = append(e.out, line)
	}
	for _, s := range fx.syncs {
		what := e.waiting[s.to]
		delete(e.waiting, s.to)
		if s.resp.ErrorCode != 0 {
			e.printf("%s: %s", what, codeName(s.resp.ErrorCode))
			continue
		}
		e.printf("%s: assignment=%q", what, s.resp.MemberAssignment)
	}
}

func codeName(code int16) string {
	if code == 0 {
		return "ok"
	}
	if err := kerr.ErrorForCode(code); err != nil {
		return err.(*kerr.Error).Message
	}
	return strconv.Itoa(int(code))
}

func (e *machineEnv) state() string {
	m := &e.m
	var b strings.Builder
	fmt.Fprintf(&b, "%s generation=%d", m.state, m.generation)
	if m.protocolType != "" {
		fmt.Fprintf(&b, " type=%s", m.protocolType)
	}
	if m.protocol != "" {
		fmt.Fprintf(&b, " protocol=%s", m.protocol)
	}
	if m.leader != "" {
		fmt.Fprintf(&b, " leader=%s", m.leader)
	}
	for _, mem := range m.sortedMembers() {
		fmt.Fprintf(&b, "\nmember %s", mem.id)
		if mem.instanceID != "" {
			fmt.Fprintf(&b, " instance=%s", mem.instanceID)
		}
		var flags []string
		if mem.join != 0 {
			flags = append(flags, "awaiting-join")
		}
		if mem.sync != 0 {
			flags = append(flags, "awaiting-sync")
		}
		if m.pendingSync[mem.id] {
			flags = append(flags, "pending-sync")
		}
		if mem.isNew {
			flags = append(flags, "new")
		}
		if len(flags) > 0 {
			fmt.Fprintf(&b, " %s", strings.Join(flags, " "))
		}
		if len(mem.assignment) > 0 {
			fmt.Fprintf(&b, " assignment=%q", mem.assignment)
		}
	}
	var pend []string
	for id := range m.pending {
		pend = append(pend, id)
	}
	slices.Sort(pend)
	for _, id := range pend {
		fmt.Fprintf(&b, "\npending %s", id)
	}
	var ts []string
	for _, k := range m.sortedTimers() {
		ts = append(ts, fmt.Sprintf("%s@%s", timerName(k), fmtDur(e.timers[k].at)))
	}
	if len(ts) > 0 {
		fmt.Fprintf(&b, "\ntimers: %s", strings.Join(ts, ", "))
	}
	return b.String()
}
