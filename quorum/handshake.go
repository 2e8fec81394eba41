package quorum

import (
	"bufio"
	"bytes"
	"fmt"
	"time"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// handshake reads the ConnectRequest and creates or resumes the session.
// ZooKeeper's rules: a client that has seen a newer zxid than this server is
// refused (closed, no answer); an unknown or expired session, or a wrong
// password, gets timeout 0, session id 0 and then the connection closes; the
// answer has the trailing readOnly byte only if the request had it.
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
	if last := tree.LastZxid(); req.LastZxidSeen > last {
		c.srv.log.Info("refusing session request: the client has seen a newer zxid than this server",
			"remote", c.nc.RemoteAddr().String(), "clientZxid", fmt.Sprintf("0x%x", req.LastZxidSeen), "serverZxid", fmt.Sprintf("0x%x", last))
		return false
	}
	timeout := c.srv.negotiateTimeout(time.Duration(req.TimeOut) * time.Millisecond)
	resp := zkproto.ConnectResponse{TimeOut: int32(timeout / time.Millisecond), HasReadOnly: req.HasReadOnly}
	var ok bool
	if !c.srv.serving() {
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
		resp.SessionID, ok = c.resumeSession(req.SessionID, req.Passwd, timeout)
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

// createSession replicates a new session and waits until it is applied.
func (c *conn) createSession(timeout time.Duration) (int64, bool) {
	id := c.srv.ids.nextID()
	txn := znode.Txn{
		Time:    time.Now().UnixMilli(),
		Session: id,
		Owner:   c.srv.ownerID(),
		Ops:     []znode.Op{{Type: zkproto.OpCreateSession, SessionTimeout: int32(timeout / time.Millisecond)}},
	}
	res := <-c.srv.repl.ProposeAsync(txn.Append(nil))
	if res.err != nil {
		c.srv.log.Warn("could not create a session", "err", res.err)
		return 0, false
	}
	if len(res.applied.results) != 1 || res.applied.results[0].Err != zkproto.ErrOK {
		c.srv.log.Warn("session create refused", "session", fmt.Sprintf("0x%x", id))
		return 0, false
	}
	return id, true
}

// resumeSession reattaches a session after checking that it is alive and the
// password is right.
func (c *conn) resumeSession(id int64, passwd []byte, timeout time.Duration) (int64, bool) {
	if !bytes.Equal(passwd, sessionPassword(id)) {
		c.srv.log.Warn("wrong password for session; refusing", "session", fmt.Sprintf("0x%x", id), "remote", c.nc.RemoteAddr().String())
		if prev := c.srv.connOf(id); prev != nil {
			prev.close("a reconnect gave a wrong password")
		}
		return 0, false
	}
	if !c.srv.tree.Load().SessionExists(id) || !c.srv.tracker.touch(id, time.Now()) {
		c.srv.log.Info("client asked for an expired or unknown session", "session", fmt.Sprintf("0x%x", id))
		return 0, false
	}
	c.srv.tracker.setTimeout(id, timeout)
	if c.srv.ens != nil && !c.revalidateSession(id, timeout) {
		return 0, false
	}
	return id, true
}

// revalidateSession makes this server the owner of a session that
// reattached to it, through the log (ZooKeeper's Learner.validateSession,
// answered by the leader): once it has applied, a write of the session
// through the server that held it before fails with SessionMoved there,
// and that server closes its connection. It also tells the leader the
// session is alive. It reports false when the session is gone or the txn
// could not be replicated.
func (c *conn) revalidateSession(id int64, timeout time.Duration) bool {
	txn := znode.Txn{
		Time:    time.Now().UnixMilli(),
		Session: id,
		Owner:   c.srv.ownerID(),
		Ops:     []znode.Op{{Type: znode.OpRevalidateSession, SessionTimeout: int32(timeout / time.Millisecond)}},
	}
	res := <-c.srv.repl.ProposeAsync(txn.Append(nil))
	if res.err != nil {
		c.srv.log.Warn("could not revalidate a session", "session", fmt.Sprintf("0x%x", id), "err", res.err)
		return false
	}
	if len(res.applied.results) != 1 || res.applied.results[0].Err != zkproto.ErrOK {
		c.srv.log.Info("revalidation refused: the session is gone", "session", fmt.Sprintf("0x%x", id))
		return false
	}
	return true
}
