package broker

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// The shell around a group's state machine (group_machine.go): it owns
// group.mu, the real timers and the connections waiting on the machine.
// Every input runs the same way:
//
//	g.mu.Lock()
//	to, ch := g.waitLocked()       // a parked request's reply channel (join, sync)
//	g.groupMachine.<input>(now, …, to)
//	out := g.takeLocked()          // timers armed/stopped, mirror published
//	g.mu.Unlock()
//	g.finish(out)                  // metadata stored, then every reply sent
//
// finish is the one place replies are sent. A successful JoinGroup reply
// waits until the group metadata is stored (a generation is stored
// before anyone is told it, group_records.go); when the store fails the
// reply is the error instead. The machine's timers are time.AfterFunc
// callbacks that run the machine's fire input; one that fires late, after
// the machine re-armed or cancelled it, carries a stale seq and does
// nothing.

type shellTimer struct {
	t   *time.Timer
	seq uint64
}

// outbox is what a step leaves to do once g.mu is released.
type outbox struct {
	replies []delivery
	store   bool // the metadata changed: store it (in the background unless a reply waits on it)
	gated   bool // a reply waits for the store
}

type delivery struct {
	ch       chan kmsg.Response
	resp     kmsg.Response
	memberID string // of a gated join reply
	gated    bool
}

// waitLocked registers a request about to park in the machine.
func (g *group) waitLocked() (replyTo, chan kmsg.Response) {
	g.nextWaiter++
	ch := make(chan kmsg.Response, 1)
	g.waiters[g.nextWaiter] = ch
	return g.nextWaiter, ch
}

// takeLocked drains the machine's outputs: timers and the membership
// mirror are applied here, under g.mu (neither blocks); replies and the
// metadata store are left for finish.
func (g *group) takeLocked() outbox {
	fx := g.drain()
	for _, op := range fx.timers {
		if st, ok := g.timers[op.key]; ok {
			st.t.Stop()
			delete(g.timers, op.key)
		}
		if !op.stop {
			g.timers[op.key] = shellTimer{seq: op.seq, t: time.AfterFunc(op.after, func() { g.fireTimer(op.key, op.seq) })}
		}
	}
	if fx.members {
		g.co.mirror.members(g)
	}
	if fx.owners {
		g.co.mirror.owners(g, g.ownersLocked())
	}
	out := outbox{store: fx.store}
	for _, j := range fx.joins {
		d := delivery{ch: g.takeWaiterLocked(j.to), resp: j.resp, memberID: j.resp.MemberID, gated: j.resp.ErrorCode == 0}
		out.gated = out.gated || d.gated
		out.replies = append(out.replies, d)
	}
	for _, s := range fx.syncs {
		out.replies = append(out.replies, delivery{ch: g.takeWaiterLocked(s.to), resp: s.resp})
	}
	return out
}

func (g *group) takeWaiterLocked(to replyTo) chan kmsg.Response {
	ch := g.waiters[to]
	delete(g.waiters, to)
	return ch
}

// finish stores the metadata if it changed and sends the replies.
func (g *group) finish(out outbox) {
	var code int16
	switch {
	case out.gated:
		err := g.persistMetadata()
		switch {
		case errors.Is(err, errGroupMoved) || errors.Is(err, errGroupDead):
			code = ec(kproto.CodeNotCoordinator)
		case err != nil:
			g.co.b.log.Warn("storing group metadata", "group", g.name, "err", err)
			code = ec(kproto.CodeCoordinatorNotAvailable)
		}
	case out.store:
		g.persistMetadataAsync()
	}
	for _, d := range out.replies {
		if d.ch == nil {
			continue
		}
		if d.gated && code != 0 {
			d.resp = joinError(d.memberID, code)
		}
		d.ch <- d.resp
	}
}

// fireTimer is a machine timer going off.
func (g *group) fireTimer(k timerKey, seq uint64) {
	g.mu.Lock()
	if st, ok := g.timers[k]; ok && st.seq == seq {
		delete(g.timers, k)
	}
	g.fire(g.co.now(), k, seq)
	out := g.takeLocked()
	g.mu.Unlock()
	g.finish(out)
}

// stepLocked runs a machine input that parks no request of the caller's
// and returns what is left to do once g.mu is released.
func (g *group) stepLocked(input func(now time.Time)) outbox {
	input(g.co.now())
	return g.takeLocked()
}

// dieLocked makes the group Dead, answering its parked requests with
// code; the caller runs finish on the result after releasing g.mu.
func (g *group) dieLocked(code int16) outbox {
	g.die(code)
	return g.takeLocked()
}

// joinInputOf is a JoinGroup request as the machine takes it.
func joinInputOf(req *kmsg.JoinGroupRequest, clientID, host string) joinInput {
	j := joinInput{memberID: req.MemberID, clientID: clientID, host: host,
		protocolType: req.ProtocolType, protocols: req.Protocols, version: req.Version,
		session: time.Duration(req.SessionTimeoutMillis) * time.Millisecond}
	j.rebalance = j.session
	if req.Version >= 1 {
		j.rebalance = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	if req.InstanceID != nil {
		j.instanceID = *req.InstanceID
	}
	return j
}

// joinGroup runs a JoinGroup through the machine and waits for its
// answer.
func (g *group) joinGroup(req *kmsg.JoinGroupRequest, clientID, host string) *kmsg.JoinGroupResponse {
	g.mu.Lock()
	to, ch := g.waitLocked()
	g.join(g.co.now(), joinInputOf(req, clientID, host), to)
	out := g.takeLocked()
	g.mu.Unlock()
	g.finish(out)
	select {
	case r := <-ch:
		return r.(*kmsg.JoinGroupResponse)
	case <-g.co.b.done:
		return joinError(req.MemberID, ec(kproto.CodeNotCoordinator))
	}
}

// syncGroup runs a SyncGroup through the machine and waits for its
// answer.
func (g *group) syncGroup(req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	s := syncInput{memberID: req.MemberID, generation: req.Generation,
		protocolType: req.ProtocolType, protocol: req.Protocol, assignments: req.GroupAssignment}
	if req.InstanceID != nil {
		s.instanceID = *req.InstanceID
	}
	g.mu.Lock()
	to, ch := g.waitLocked()
	g.sync(g.co.now(), s, to)
	out := g.takeLocked()
	g.mu.Unlock()
	g.finish(out)
	select {
	case r := <-ch:
		return r.(*kmsg.SyncGroupResponse)
	case <-g.co.b.done:
		return syncError(ec(kproto.CodeNotCoordinator))
	}
}
