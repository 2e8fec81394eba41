package quorum

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// RequestHook sees every request of an established session (pings
// included, the connect handshake and four-letter words not) once its
// header is decoded and before it is executed (Config.RequestHook), on the
// connection's reader goroutine: it is how a test harness (package
// zkafkatest) injects errors, delays and dropped connections. nil, the
// default, costs one nil check per request. It must be safe for
// concurrent use.
type RequestHook func(info RequestInfo) RequestAction

// RequestInfo is the request a RequestHook sees.
type RequestInfo struct {
	Server  uint64 // myid of the server that received it (0 standalone)
	Session int64
	Xid     int32
	Op      zkproto.OpCode
}

// RequestAction is what the server does with a hooked request. The zero
// value lets it through. Delay applies first (the connection reads nothing
// meanwhile); then Drop closes the connection unanswered, or a non-zero
// Err answers with that error code in place of executing the request.
type RequestAction struct {
	Delay time.Duration
	Drop  bool
	Err   zkproto.Err
}

// hooked runs the request hook, if any, for the request with header h.
// handled reports that the request is answered (cl) or, with cl nil, that
// the connection must close.
func (c *conn) hooked(h zkproto.RequestHeader) (cl *call, handled bool) {
	hook := c.srv.cfg.RequestHook
	if hook == nil {
		return nil, false
	}
	act := hook(RequestInfo{Server: c.srv.cfg.MyID, Session: c.sessionID(), Xid: h.Xid, Op: h.Type})
	if act.Delay > 0 {
		t := time.NewTimer(act.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.closed:
			return nil, true
		case <-c.srv.done:
			return nil, true
		}
	}
	switch {
	case act.Drop:
		c.close("dropped by the request hook")
		return nil, true
	case act.Err != 0:
		return &call{xid: h.Xid, op: h.Type, start: time.Now(), reply: c.errorReply(h.Xid, act.Err)}, true
	}
	return nil, false
}

// ErrNoSession is ExpireSession's answer for a session the tree does not
// hold.
var ErrNoSession = errors.New("quorum: no such session")

// ExpireSession ends session id as its timeout would: a closeSession txn
// through the replicated log deletes its ephemerals everywhere, and its
// client, reconnecting, is told the session expired. Any server of the
// ensemble may be asked.
func (s *Server) ExpireSession(ctx context.Context, id int64) error {
	if _, ok := s.tree.Load().Sessions()[id]; !ok {
		return fmt.Errorf("%w 0x%x", ErrNoSession, id)
	}
	s.log.Info("session expired on request", "session", fmt.Sprintf("0x%x", id))
	txn := znode.Txn{Time: time.Now().UnixMilli(), Session: id, Ops: []znode.Op{{Type: zkproto.OpCloseSession}}}
	select {
	case res := <-s.repl.ProposeAsync(txn.Append(nil)):
		return res.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
