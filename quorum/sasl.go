package quorum

import (
	"errors"
	"fmt"
	"time"

	"github.com/zkafka/zkafka/internal/digestmd5"
	"github.com/zkafka/zkafka/zkproto"
)

// Client SASL (opcode 102) and the enforcement of authentication, as
// ZooKeeperServer.processSasl and AuthenticationHelper of ZooKeeper 3.8
// answer:
//
//   - Each sasl request carries one token of a DIGEST-MD5 exchange
//     (internal/digestmd5, service "zookeeper", realm and host
//     "zk-sasl-md5"); the reply is the server's token, with zxid 0.
//   - When the exchange completes, the connection gets the identity
//     sasl:USER (and super:"" when USER is zookeeper.superUser).
//   - A failed exchange is answered AuthFailed (SessionClosedRequireSASL
//     when SASL is enforced) with a null token, after saslFailureDelay,
//     and the connection closes (the session lives on until it expires);
//     with allowSaslFailedClients (and SASL not enforced) the reply is OK
//     with a null token and the connection stays.
//   - Without JAAS users every sasl request is answered OK with a null
//     token (ZooKeeper's connection then has no SASL server).
//   - With enforcement on, any request but auth and sasl from a connection
//     without an identity of the enforced schemes is answered
//     SessionClosedRequireSASL, without a body, and the connection closes.

// saslFailureDelay is how long a failed SASL exchange waits before its
// answer: a password guess costs the guesser at least as much time as it
// costs the server (ZooKeeper answers at once).
const saslFailureDelay = time.Second

// saslStep answers one sasl request.
func (c *conn) saslStep(cl *call, req *zkproto.GetSASLRequest) (*call, bool) {
	cfg := &c.srv.cfg.SASL
	hdr := zkproto.ReplyHeader{Xid: cl.xid}
	if cfg.Users == nil {
		c.srv.log.Warn("sasl request, but this server has no JAAS users (no SASL)", "remote", c.nc.RemoteAddr().String())
		cl.reply = &replyFrame{hdr: hdr, body: &zkproto.SetSASLResponse{}}
		return cl, true
	}
	if c.sasl == nil {
		c.sasl = &digestmd5.Server{Service: "zookeeper", Host: "zk-sasl-md5", Password: cfg.password}
	}
	token, err := c.sasl.Next(req.Token)
	if err != nil {
		return c.saslFailed(cl, err)
	}
	if c.sasl.Complete() {
		user := c.sasl.User()
		super := cfg.SuperUser != "" && user == cfg.SuperUser
		c.addIdentity(zkproto.ID{Scheme: "sasl", ID: user}, super)
		if super {
			c.addIdentity(zkproto.ID{Scheme: "super", ID: ""}, true)
		}
		c.srv.log.Info("SASL authenticated", "user", user, "super", super, "session", fmt.Sprintf("0x%x", c.sessionID()), "remote", c.nc.RemoteAddr().String())
	}
	cl.reply = &replyFrame{hdr: hdr, body: &zkproto.SetSASLResponse{Token: token}}
	return cl, true
}

// saslFailed answers a failed exchange after saslFailureDelay.
func (c *conn) saslFailed(cl *call, err error) (*call, bool) {
	cfg := &c.srv.cfg.SASL
	user := ""
	var de *digestmd5.Error
	if errors.As(err, &de) {
		user = de.User
	}
	c.srv.log.Warn("SASL authentication failed", "remote", c.nc.RemoteAddr().String(), "user", user,
		"session", fmt.Sprintf("0x%x", c.sessionID()), "err", err)
	hdr := zkproto.ReplyHeader{Xid: cl.xid}
	if cfg.AllowFailedClients && !cfg.saslRequired() {
		cl.reply = &replyFrame{hdr: hdr, body: &zkproto.SetSASLResponse{}}
		return cl, true
	}
	select {
	case <-time.After(c.srv.saslFailureDelay):
	case <-c.closed:
	}
	hdr.Err = zkproto.ErrAuthFailed
	if cfg.saslRequired() {
		hdr.Err = zkproto.ErrSessionClosedRequireSASL
	}
	cl.reply = &replyFrame{hdr: hdr, body: &zkproto.SetSASLResponse{}}
	cl.closeAfter = true
	return cl, false
}

// authEnforced reports whether a request of type op must be refused:
// enforcement is on, op is not auth or sasl, and the connection holds no
// identity of the enforced schemes.
func (c *conn) authEnforced(op zkproto.OpCode) bool {
	cfg := &c.srv.cfg.SASL
	if !cfg.EnforceAuth || op == zkproto.OpAuth || op == zkproto.OpSASL {
		return false
	}
	ids, _ := c.identities()
	for _, id := range ids {
		for _, scheme := range cfg.EnforceSchemes {
			if id.Scheme == scheme {
				return false
			}
		}
	}
	return true
}

// refuseUnauthenticated answers a request of an unauthenticated
// connection when authentication is enforced, and closes it after.
func (c *conn) refuseUnauthenticated(cl *call) (*call, bool) {
	ids, _ := c.identities()
	schemes := make([]string, len(ids))
	for i, id := range ids {
		schemes[i] = id.Scheme
	}
	c.srv.log.Warn("request from a client not authenticated as enforced; closing", "remote", c.nc.RemoteAddr().String(),
		"session", fmt.Sprintf("0x%x", c.sessionID()), "schemes", schemes, "want", c.srv.cfg.SASL.EnforceSchemes)
	cl.reply = &replyFrame{hdr: zkproto.ReplyHeader{Xid: cl.xid, Err: zkproto.ErrSessionClosedRequireSASL}, body: &zkproto.Empty{}}
	cl.closeAfter = true
	return cl, false
}
