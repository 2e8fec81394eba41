package quorum

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// handshake reads the ConnectRequest and creates or resumes the session.
// ZooKeeper's rules: a client that has seen a newer zxid than this server is
// refused (closed, no answer) — in an ensemble only once this server could
// not catch up to it within servingGrace; an unknown or expired session, or a wrong
// password, gets timeout 0, session id 0 and then the connection closes; the
// answer has the trailing readOnly byte only if the request had it. When
// this server cannot tell in time whether a session lives (no leader, a
// leadership change), it closes without an answer: "expired" is final for
// the client, a closed connection only sends it to the next server.
func (c *conn) handshake(br *bufio.Reader, bw *bufio.Writer) bool {
	c.nc.SetReadDeadline(time.Now().Add(c.srv.cfg.TickTime * time.Duration(max(c.srv.cfg.InitLimit, 5))))
	frame, err := c.readFrame(br, nil)
	c.nc.SetReadDeadline(time.Time{})
	if err != nil {
		c.logReadError(err)
		return false
	}
	var req zkproto.ConnectRequest
	r := zkproto.NewReader(frame)
	req.Decode(r)
	if err := r.Err(); err != nil {
		c.srv.log.Warn("bad connect request; closing", "remote", c.nc.RemoteAddr().String(), "err", err)
		return false
	}
	tree := c.srv.tree.Load()
	if last := tree.LastZxid(); req.LastZxidSeen > last && !c.srv.catchUp(req.LastZxidSeen) {
		c.srv.log.Info("refusing session request: the client has seen a newer zxid than this server",
			"remote", c.nc.RemoteAddr().String(), "clientZxid", fmt.Sprintf("0x%x", req.LastZxidSeen), "serverZxid", fmt.Sprintf("0x%x", last))
		return false
	}
	timeout := c.srv.negotiateTimeout(time.Duration(req.TimeOut) * time.Millisecond)
	resp := zkproto.ConnectResponse{TimeOut: int32(timeout / time.Millisecond), HasReadOnly: req.HasReadOnly}
	var ok bool
	if !c.srv.serving() && !c.srv.awaitLeader() {
		// An ensemble member without a leader: only read-only clients.
		if !req.ReadOnly {
			c.srv.log.Debug("refusing a client: no leader", "remote", c.nc.RemoteAddr().String())
			return false
		}
		c.readOnly.Store(true)
		resp.ReadOnly = true
		resp.SessionID, ok = req.SessionID, req.SessionID != 0 && bytes.Equal(req.Passwd, sessionPassword(req.SessionID))
		if !ok {
			resp.SessionID, ok = c.srv.ids.nextID(), true // a local session, never replicated
		}
	} else if req.SessionID == 0 {
		resp.SessionID, ok = c.createSession(timeout)
		if !ok {
			return false
		}
	} else {
		switch c.resumeSession(req.SessionID, req.Passwd, timeout) {
		case sessionUnknown:
			return false // no answer: the client tries another server
		case sessionAlive:
			resp.SessionID, ok = req.SessionID, true
		}
	}
	if ok {
		resp.Passwd = sessionPassword(resp.SessionID)
		c.sessionTimeout = timeout
		c.sid.Store(resp.SessionID)
		c.srv.attach(resp.SessionID, c)
	} else {
		resp = zkproto.ConnectResponse{Passwd: make([]byte, 16), HasReadOnly: req.HasReadOnly}
	}
	if err := writeRaw(bw, zkproto.AppendFrame(nil, &resp)); err != nil || !ok {
		return false
	}
	return true
}

// negotiateTimeout clamps a requested session timeout to the configured bounds.
func (s *Server) negotiateTimeout(want time.Duration) time.Duration {
	return min(max(want, s.cfg.MinSessionTimeout), s.cfg.MaxSessionTimeout)
}

// sessionVerdict is what a server found out about a session a client
// asked to resume.
type sessionVerdict int

const (
	// sessionAlive: the session lives and is now attached here.
	sessionAlive sessionVerdict = iota
	// sessionGone: the session is known to be closed (or the password is
	// wrong): the client is answered "expired" (session id 0, timeout 0).
	sessionGone
	// sessionUnknown: no outcome in time (no leader, leadership changed):
	// the connection closes without an answer.
	sessionUnknown
)

// handshakeBudget is how long a handshake may wait for the ensemble to
// create or revalidate a session: half the session timeout, time for an
// election after a leader died (about a tickTime) while the session still
// has a lease. Java clients give up on a server after timeout/servers and
// try the next one; go-zookeeper after ten times two thirds of it.
func handshakeBudget(timeout time.Duration) time.Duration {
	return max(timeout/2, time.Second)
}

// errNoOutcome is a session txn's outcome that did not come within the
// handshake's budget, or came after the connection closed.
var errNoOutcome = errors.New("no outcome within the handshake's budget")

// withdrawableProposer is a replicator that can withdraw a proposal its
// caller gave up on before it reaches the log (raftReplicator). A session
// txn proposed by a handshake that gave up must not apply later: a late
// revalidation would move the session back here after its client went on
// to another server.
type withdrawableProposer interface {
	ProposeWithin(ctx context.Context, data []byte) proposeResult
}

// proposeWithin proposes a session txn and waits for its outcome until
// deadline or until the connection closes (then errNoOutcome).
func (c *conn) proposeWithin(data []byte, deadline time.Time) proposeResult {
	ctx, cancel := context.WithDeadline(c.life, deadline)
	defer cancel()
	var res proposeResult
	if p, ok := c.srv.repl.(withdrawableProposer); ok {
		res = p.ProposeWithin(ctx, data)
	} else {
		select {
		case res = <-c.srv.repl.ProposeAsync(data):
		case <-ctx.Done():
			res.err = ctx.Err()
		}
	}
	if res.err != nil && ctx.Err() != nil {
		res.err = errNoOutcome
	}
	return res
}

// createSession replicates a new session and waits until it is applied.
// Any failure closes the connection without an answer: a create whose
// outcome is unknown may have made a session nobody holds, which expires.
func (c *conn) createSession(timeout time.Duration) (int64, bool) {
	id := c.srv.ids.nextID()
	txn := znode.Txn{
		Time:    time.Now().UnixMilli(),
		Session: id,
		Owner:   c.srv.ownerID(),
		Ops:     []znode.Op{{Type: zkproto.OpCreateSession, SessionTimeout: int32(timeout / time.Millisecond)}},
	}
	res := c.proposeWithin(txn.Append(nil), time.Now().Add(handshakeBudget(timeout)))
	if res.err != nil {
		c.srv.log.Warn("could not create a session; closing without an answer", "err", res.err)
		return 0, false
	}
	if len(res.applied.results) != 1 || res.applied.results[0].Err != zkproto.ErrOK {
		c.srv.log.Warn("session create refused", "session", fmt.Sprintf("0x%x", id))
		return 0, false
	}
	return id, true
}

// resumeSession reattaches a session after checking the password and that
// the session is alive. The local tree may lag behind the server that
// created the session, so "unknown" is only believed after catching up
// with the leader; in an ensemble the answer is the revalidation txn's
// applied result, not this server's tracker (whose closing marks may be
// those of a leader that has since been deposed).
func (c *conn) resumeSession(id int64, passwd []byte, timeout time.Duration) sessionVerdict {
	if !bytes.Equal(passwd, sessionPassword(id)) {
		c.srv.log.Warn("wrong password for session; refusing", "session", fmt.Sprintf("0x%x", id), "remote", c.nc.RemoteAddr().String())
		if prev := c.srv.connOf(id); prev != nil {
			prev.close("a reconnect gave a wrong password")
		}
		return sessionGone
	}
	deadline := time.Now().Add(handshakeBudget(timeout))
	if !c.srv.tree.Load().SessionExists(id) {
		ctx, cancel := context.WithDeadline(c.life, deadline)
		err := c.srv.repl.ReadIndex(ctx)
		cancel()
		if err != nil {
			c.srv.log.Info("cannot tell whether a session lives (no leader to catch up with); closing without an answer",
				"session", fmt.Sprintf("0x%x", id), "err", err)
			return sessionUnknown
		}
		if !c.srv.tree.Load().SessionExists(id) {
			c.srv.log.Info("client asked for an expired or unknown session", "session", fmt.Sprintf("0x%x", id))
			return sessionGone
		}
	}
	now := time.Now()
	if c.srv.ens == nil {
		// Standalone: this server decides expiry, its tracker is the truth.
		if !c.srv.tracker.touch(id, now) {
			c.srv.log.Info("client asked for an expiring session", "session", fmt.Sprintf("0x%x", id))
			return sessionGone
		}
		c.srv.tracker.setTimeout(id, timeout)
		return sessionAlive
	}
	c.srv.tracker.adopt(id, timeout, now)
	return c.revalidateSession(id, timeout, deadline)
}

// revalidateSession makes this server the owner of a session that
// reattached to it, through the log (ZooKeeper's Learner.validateSession,
// answered by the leader): once it has applied, a write of the session
// through the server that held it before fails with SessionMoved there,
// and that server closes its connection. It also tells the leader the
// session is alive. The txn is idempotent, so an outcome lost to a
// leadership change (a follower that forwarded it to a leader that just
// died) is retried until deadline.
func (c *conn) revalidateSession(id int64, timeout time.Duration, deadline time.Time) sessionVerdict {
	txn := znode.Txn{
		Time:    time.Now().UnixMilli(),
		Session: id,
		Owner:   c.srv.ownerID(),
		Ops:     []znode.Op{{Type: znode.OpRevalidateSession, SessionTimeout: int32(timeout / time.Millisecond)}},
	}
	data := txn.Append(nil)
	for attempt := 1; ; attempt++ {
		res := c.proposeWithin(data, deadline)
		if res.err == nil {
			if len(res.applied.results) != 1 || res.applied.results[0].Err != zkproto.ErrOK {
				c.srv.log.Info("revalidation refused: the session is gone", "session", fmt.Sprintf("0x%x", id))
				return sessionGone
			}
			return sessionAlive
		}
		if !retryableOutcome(res.err) || !c.pause(deadline) {
			c.srv.log.Warn("could not revalidate a session; closing without an answer",
				"session", fmt.Sprintf("0x%x", id), "attempts", attempt, "err", res.err)
			return sessionUnknown
		}
		c.srv.log.Debug("revalidating a session again", "session", fmt.Sprintf("0x%x", id), "err", res.err)
	}
}

// retryableOutcome reports whether a proposal failed for a reason that a
// new proposal of the same idempotent txn may not meet: it was dropped, or
// its outcome was lost with a leader.
func retryableOutcome(err error) bool {
	return errors.Is(err, raftnode.ErrOutcomeUnknown) || errors.Is(err, raftnode.ErrProposalDropped)
}

// pause waits a raft tick before a retry; false if deadline would pass
// first or the connection closed.
func (c *conn) pause(deadline time.Time) bool {
	d := raftTick(c.srv.cfg.TickTime)
	if time.Now().Add(d).After(deadline) {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.life.Done():
		return false
	}
}
