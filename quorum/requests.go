package quorum

import (
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// decodeCall turns one request frame into a call. It reports false when the
// connection must close after the call (if any) is answered.
func (c *conn) decodeCall(frame []byte) (*call, bool) {
	r := zkproto.NewReader(frame)
	var h zkproto.RequestHeader
	h.Decode(r)
	if r.Err() != nil {
		c.srv.log.Warn("request header truncated; closing", "remote", c.nc.RemoteAddr().String())
		return nil, false
	}
	body := r.Src
	if cl, handled := c.hooked(h); handled {
		return cl, cl != nil
	}
	cl := &call{xid: h.Xid, op: h.Type, start: time.Now()}
	if c.authEnforced(h.Type) {
		return c.refuseUnauthenticated(cl)
	}
	switch h.Type {
	case zkproto.OpPing:
		cl.reply = &replyFrame{hdr: zkproto.ReplyHeader{Xid: h.Xid, Zxid: c.srv.tree.Load().LastZxid()}, body: &zkproto.Empty{}}
		return cl, true
	case zkproto.OpCloseSession:
		if c.readOnly.Load() {
			// A read-only session is not replicated: nothing to close.
			cl.reply = &replyFrame{hdr: zkproto.ReplyHeader{Xid: h.Xid, Zxid: c.srv.tree.Load().LastZxid()}, body: &zkproto.Empty{}}
			cl.closeAfter = true
			return cl, true
		}
		txn := znode.Txn{Time: time.Now().UnixMilli(), Session: c.sessionID(),
			Ops: []znode.Op{{Type: zkproto.OpCloseSession}}}
		if !c.awaitReads() {
			return nil, false
		}
		c.srv.tracker.markClosing(c.sessionID())
		c.closingSession.Store(true)
		cl.wait = c.srv.proposeTxn(&txn)
		cl.closeAfter = true
		return cl, true
	}
	rec, err := zkproto.DecodeRequest(h.Type, body)
	if err != nil {
		return c.badRequest(cl, err)
	}
	cl.req = rec
	switch h.Type {
	case zkproto.OpAuth:
		return c.authenticate(cl, rec.(*zkproto.AuthPacket))
	case zkproto.OpReconfig:
		return c.reconfig(cl, rec.(*zkproto.ReconfigRequest))
	case zkproto.OpSASL:
		return c.saslStep(cl, rec.(*zkproto.GetSASLRequest))
	}
	if c.readOnly.Load() {
		if _, isWrite := writeOps(h.Type, rec, new([1]znode.Op)); isWrite || h.Type == zkproto.OpSync {
			cl.reply = c.errorReply(h.Xid, zkproto.ErrNotReadOnly)
			return cl, true
		}
	}
	var one [1]znode.Op
	if ops, isWrite := writeOps(h.Type, rec, &one); isWrite {
		if !c.awaitReads() {
			return nil, false
		}
		ids, super := c.identities()
		txn := znode.Txn{Time: time.Now().UnixMilli(), Session: c.sessionID(), Auth: ids, Super: super,
			Ops: ops, Multi: h.Type == zkproto.OpMulti, Owner: c.srv.ownerID(), EnforceQuota: c.srv.cfg.EnforceQuota,
			SASLScheme: c.srv.cfg.SASL.Provider}
		cl.wait = c.srv.proposeTxn(&txn)
	}
	return cl, true
}

// badRequest answers a request that did not decode, as ZooKeeper does: an
// unknown opcode gets Unimplemented and the connection closes; a multi that
// mixes reads and writes gets MarshallingError; anything else closes.
func (c *conn) badRequest(cl *call, err error) (*call, bool) {
	switch {
	case errors.Is(err, zkproto.ErrUnknownOpcode):
		c.srv.log.Warn("unknown opcode; closing", "op", int32(cl.op), "remote", c.nc.RemoteAddr().String())
		cl.reply = c.errorReply(cl.xid, zkproto.ErrUnimplemented)
		cl.closeAfter = true
		return cl, false
	case errors.Is(err, zkproto.ErrMultiMixed):
		cl.reply = c.errorReply(cl.xid, zkproto.ErrMarshallingError)
		return cl, true
	}
	c.srv.log.Warn("malformed request; closing", "op", int32(cl.op), "remote", c.nc.RemoteAddr().String(), "err", err)
	cl.reply = c.errorReply(cl.xid, zkproto.ErrMarshallingError)
	cl.closeAfter = true
	return cl, false
}

func (c *conn) errorReply(xid int32, err zkproto.Err) *replyFrame {
	return &replyFrame{hdr: zkproto.ReplyHeader{Xid: xid, Zxid: c.srv.tree.Load().LastZxid(), Err: err}, body: &zkproto.Empty{}}
}

// writeOps maps a write request to the ops of its txn; isWrite is false for
// reads. A request of one op gets one[:] (the caller's, on its stack); a
// multi gets a new list.
func writeOps(op zkproto.OpCode, rec zkproto.Record, one *[1]znode.Op) (ops []znode.Op, isWrite bool) {
	if op == zkproto.OpMulti {
		m := rec.(*zkproto.MultiRequest)
		ops = make([]znode.Op, 0, len(m.Ops))
		for _, o := range m.Ops {
			wo, ok := writeOp(o.Type, o.Op)
			if !ok {
				wo = znode.Op{Type: o.Type} // Apply reports it as a bad op
			}
			ops = append(ops, wo)
		}
		return ops, true
	}
	o, ok := writeOp(op, rec)
	if !ok {
		return nil, false
	}
	one[0] = o
	return one[:], true
}

func writeOp(op zkproto.OpCode, rec zkproto.Record) (znode.Op, bool) {
	switch r := rec.(type) {
	case *zkproto.CreateRequest:
		return znode.Op{Type: op, Path: r.Path, Data: r.Data, ACL: r.ACL, Mode: r.Flags}, true
	case *zkproto.CreateTTLRequest:
		return znode.Op{Type: op, Path: r.Path, Data: r.Data, ACL: r.ACL, Mode: r.Flags, TTL: r.TTL}, true
	case *zkproto.DeleteRequest:
		return znode.Op{Type: op, Path: r.Path, Version: r.Version}, true
	case *zkproto.DeleteContainerRequest:
		return znode.Op{Type: op, Path: r.Path, Version: -1}, true
	case *zkproto.SetDataRequest:
		return znode.Op{Type: op, Path: r.Path, Data: r.Data, Version: r.Version}, true
	case *zkproto.SetACLRequest:
		return znode.Op{Type: op, Path: r.Path, ACL: r.ACL, Version: r.Version}, true
	case *zkproto.CheckVersionRequest:
		return znode.Op{Type: op, Path: r.Path, Version: r.Version}, true
	}
	return znode.Op{}, false
}

// authenticate handles addAuth. The digest scheme adds the identity
// user:base64(sha1(user:password)); a superDigest match makes the session
// super. An unknown scheme gets AuthFailed and the connection closes.
func (c *conn) authenticate(cl *call, p *zkproto.AuthPacket) (*call, bool) {
	// ZooKeeper answers auth with the request's own xid (-4 from the Java
	// client, a normal xid from go-zookeeper) and zxid 0.
	hdr := zkproto.ReplyHeader{Xid: cl.xid}
	switch p.Scheme {
	case "digest":
		user, _, _ := strings.Cut(string(p.Auth), ":")
		digest := digestID(string(p.Auth))
		super := c.srv.cfg.SuperDigest != "" && c.srv.cfg.SuperDigest == digest
		c.addIdentity(zkproto.ID{Scheme: "digest", ID: digest}, super)
		if super {
			c.addIdentity(zkproto.ID{Scheme: "super", ID: user}, true)
		}
	case "ip":
		// Every connection already holds its ip identity.
	default:
		c.srv.log.Warn("auth with an unknown scheme; closing", "scheme", p.Scheme, "session", fmt.Sprintf("0x%x", c.sessionID()))
		hdr.Err = zkproto.ErrAuthFailed
		cl.reply = &replyFrame{hdr: hdr, body: &zkproto.Empty{}}
		cl.closeAfter = true
		return cl, false
	}
	cl.reply = &replyFrame{hdr: hdr, body: &zkproto.Empty{}}
	return cl, true
}

// digestID is the digest scheme's identity for "user:password":
// user:base64(sha1(user:password)), as ZooKeeper's
// DigestAuthenticationProvider computes it.
func digestID(userPassword string) string {
	user, _, _ := strings.Cut(userPassword, ":")
	sum := sha1.Sum([]byte(userPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// execute builds the reply of a call when its turn comes: every earlier call
// of the session has been answered, so a read sees the session's writes.
func (c *conn) execute(cl *call, res proposeResult) *replyFrame {
	if cl.wait == nil {
		return c.executeRead(cl)
	}
	if res.err != nil {
		c.srv.log.Warn("write not replicated; closing the connection", "err", res.err)
		c.close("write failed")
		return c.errorReply(cl.xid, zkproto.ErrConnectionLoss)
	}
	a := res.applied
	hdr := zkproto.ReplyHeader{Xid: cl.xid, Zxid: a.zxid}
	if cl.op == zkproto.OpMulti {
		if len(a.results) == 1 && a.results[0].Type == zkproto.OpMulti {
			// The whole multi was refused (a read or setACL op inside it).
			hdr.Err = a.results[0].Err
			return &replyFrame{hdr: hdr, body: &zkproto.Empty{}}
		}
		return &replyFrame{hdr: hdr, body: multiResponse(a.results)}
	}
	if len(a.results) == 0 {
		return &replyFrame{hdr: hdr, body: &zkproto.Empty{}}
	}
	r := a.results[0]
	if r.Err != zkproto.ErrOK {
		hdr.Err = r.Err
		return &replyFrame{hdr: hdr, body: &zkproto.Empty{}}
	}
	if cl.op == zkproto.OpReconfig {
		// The new configuration, as ZooKeeper answers a reconfig.
		data, _, _ := c.srv.tree.Load().Get("/zookeeper/config")
		return &replyFrame{hdr: hdr, body: &zkproto.GetDataResponse{Data: data, Stat: r.Stat}}
	}
	return &replyFrame{hdr: hdr, body: writeResponse(cl.op, r)}
}

func writeResponse(op zkproto.OpCode, r znode.Result) zkproto.Record {
	switch op {
	case zkproto.OpCreate:
		return &zkproto.CreateResponse{Path: r.Path}
	case zkproto.OpCreate2, zkproto.OpCreateTTL, zkproto.OpCreateContainer:
		return &zkproto.Create2Response{Path: r.Path, Stat: r.Stat}
	case zkproto.OpSetData:
		return &zkproto.SetDataResponse{Stat: r.Stat}
	case zkproto.OpSetACL:
		return &zkproto.SetACLResponse{Stat: r.Stat}
	}
	return &zkproto.Empty{}
}

// multiResponse encodes a multi's results: on failure every result is an
// error result (ok before the failing op, its error, then
// RuntimeInconsistency). As in ZooKeeper 3.8, a create2 inside a multi comes
// back typed as create (path only), while createTTL and createContainer
// answer with the create2 shape (path and stat).
func multiResponse(results []znode.Result) *zkproto.MultiResponse {
	failed := false
	for _, r := range results {
		if r.Err != zkproto.ErrOK {
			failed = true
		}
	}
	out := &zkproto.MultiResponse{Results: make([]zkproto.MultiResult, len(results))}
	for i, r := range results {
		mr := &out.Results[i]
		if failed {
			mr.Type, mr.Err = zkproto.OpError, r.Err
			continue
		}
		mr.Type, mr.Path, mr.Stat = r.Type, r.Path, r.Stat
		switch r.Type {
		case zkproto.OpCreate2:
			mr.Type = zkproto.OpCreate
		case zkproto.OpCreateTTL, zkproto.OpCreateContainer:
			mr.Type = zkproto.OpCreate2
		}
	}
	return out
}
