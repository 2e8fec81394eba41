package quorum

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// reconfigTimeout bounds the wait for a reconfig's conf change.
const reconfigTimeout = 30 * time.Second

// members is the ensemble's configuration as of the last applied reconfig
// (or zoo.cfg's): its servers and version.
type members struct {
	servers []ServerSpec
	version uint64
}

// currentMembers returns the configuration in force.
func (s *Server) currentMembers() members {
	if m := s.members.Load(); m != nil {
		return *m
	}
	return members{servers: s.cfg.Servers, version: s.cfg.ConfigVersion}
}

// adoptConfig makes the configuration in t's /zookeeper/config, written by
// a reconfig, the one in force: the transport learns its members.
func (s *Server) adoptConfig(t *znode.Tree) {
	data, _, err := t.Get("/zookeeper/config")
	if err != zkproto.ErrOK {
		return
	}
	servers, perr := parseMembers(string(data))
	if perr != zkproto.ErrOK {
		s.log.Error("/zookeeper/config does not parse; membership unchanged", "config", string(data))
		return
	}
	m := &members{servers: servers, version: configVersionOf(string(data))}
	s.members.Store(m)
	if s.ens != nil && s.ens.transport != nil {
		addrs := map[uint64]string{}
		for _, sv := range servers {
			addrs[sv.ID] = net.JoinHostPort(sv.Host, strconv.Itoa(sv.PeerPort))
		}
		s.ens.transport.setPeers(addrs)
	}
	s.log.Info("configuration changed", "version", strconv.FormatUint(m.version, 16), "servers", len(servers))
}

// configVersionOf reads the hex version line of a config text.
func configVersionOf(text string) uint64 {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "version="); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n
		}
	}
	return 0
}

// reconfig answers opcode 16 in the order of ZooKeeper's PrepRequestProcessor:
// reconfigEnabled (else ReconfigDisabled), an ensemble (else
// Unimplemented, as a standalone ZooKeeper), no change in progress
// (ReconfigInProgress), -from (BadVersion), the new members
// (BadArguments), a synced quorum of them on the leader (NewConfigNoQuorum),
// then WRITE on /zookeeper/config (NoAuth). The change itself is a raft
// conf change whose payload is the OpSetConfig txn, so /zookeeper/config
// and raft's membership change at the same zxid on every server.
func (c *conn) reconfig(cl *call, req *zkproto.ReconfigRequest) (*call, bool) {
	s := c.srv
	repl, ok := s.repl.(*raftReplicator)
	switch {
	case !s.cfg.ReconfigEnabled:
		cl.reply = c.errorReply(cl.xid, zkproto.ErrReconfigDisabled)
		return cl, true
	case s.ens == nil || !ok:
		cl.reply = c.errorReply(cl.xid, zkproto.ErrUnimplemented)
		return cl, true
	}
	st := repl.node.RecentStatus()
	cur := s.currentMembers()
	next, err := nextMembers(cur.servers, cur.version, req)
	switch {
	case len(st.Outgoing) > 0:
		err = zkproto.ErrReconfigInProgress
	case err != zkproto.ErrOK:
	case st.Role == raftnode.RoleLeader && !quorumSynced(next, st):
		err = zkproto.ErrNewConfigNoQuorum
	default:
		ids, super := c.identities()
		err = reconfigAllowed(func(path string, perm int32) zkproto.Err {
			return s.tree.Load().CheckACL(path, perm, ids, super)
		})
	}
	if err != zkproto.ErrOK {
		cl.reply = c.errorReply(cl.xid, err)
		return cl, true
	}
	if !c.awaitReads() {
		return nil, false
	}
	text := s.cfg.configText(next, 0)
	ids, super := c.identities()
	txn := znode.Txn{Time: time.Now().UnixMilli(), Session: c.sessionID(), Auth: ids, Super: super, Owner: s.ownerID(),
		Ops: []znode.Op{{Type: znode.OpSetConfig, Data: []byte(strings.TrimSuffix(text, "version=0"))}}}
	data := txn.Append(nil)
	cc := membershipChange(cur.servers, next)
	if cc == nil {
		cl.wait = repl.ProposeAsync(data) // addresses only: no raft change
		return cl, true
	}
	out := make(chan proposeResult, 1)
	cl.wait = out
	started := s.goTracked("zk-reconfig", func() {
		ctx, cancel := context.WithTimeout(context.Background(), reconfigTimeout)
		defer cancel()
		value, _, err := repl.node.ProposeConfChange(ctx, cc, data)
		if errors.Is(err, raftnode.ErrConfChangePending) {
			out <- refused(s, zkproto.ErrReconfigInProgress)
			return
		}
		res := proposeResult{err: err}
		res.applied, _ = value.(*appliedTxn)
		if err == nil && res.applied == nil {
			res.err = errors.New("reconfig applied without a result")
		}
		out <- res
	})
	if !started {
		out <- proposeResult{err: raftnode.ErrStopped}
	}
	return cl, true
}

// refused is the result of a write refused before it was logged.
func refused(s *Server, err zkproto.Err) proposeResult {
	return proposeResult{applied: &appliedTxn{zxid: s.tree.Load().LastZxid(), results: []znode.Result{{Err: err}}}}
}
