package quorum

import (
	"context"
	"fmt"
	"strings"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// executeRead answers a read-side request from the local tree.
func (c *conn) executeRead(cl *call) *replyFrame {
	tree := c.srv.tree.Load()
	body, err := c.read(tree, cl)
	// Every reply carries its request's xid, setWatches included (clients
	// send it with xid -8, but ZooKeeper echoes whatever came).
	hdr := zkproto.ReplyHeader{Xid: cl.xid, Zxid: tree.LastZxid(), Err: err}
	if err != zkproto.ErrOK || body == nil {
		body = &zkproto.Empty{}
	}
	return &replyFrame{hdr: hdr, body: body}
}

func (c *conn) read(tree *znode.Tree, cl *call) (zkproto.Record, zkproto.Err) {
	switch r := cl.req.(type) {
	case *zkproto.ExistsRequest:
		return c.exists(tree, r)
	case *zkproto.GetDataRequest:
		return c.getData(tree, r.Path, r.Watch)
	case *zkproto.GetChildrenRequest:
		return c.getChildren(tree, cl.op, r.Path, r.Watch)
	case *zkproto.GetACLRequest:
		return c.getACL(tree, r.Path)
	case *zkproto.GetAllChildrenNumberRequest:
		if err := c.checkACL(tree, r.Path, zkproto.PermRead); err != zkproto.ErrOK {
			return nil, err
		}
		n, err := tree.AllChildrenNumber(r.Path)
		return &zkproto.GetAllChildrenNumberResponse{TotalNumber: n}, err
	case *zkproto.GetEphemeralsRequest:
		return &zkproto.GetEphemeralsResponse{Ephemerals: tree.Ephemerals(c.sessionID(), r.PrefixPath)}, zkproto.ErrOK
	case *zkproto.SyncRequest:
		if err := c.sync(); err != nil {
			c.srv.log.Info("sync found no leader in time; closing the connection", "session", fmt.Sprintf("0x%x", c.sessionID()), "err", err)
			c.close("sync failed")
			return nil, zkproto.ErrConnectionLoss
		}
		return &zkproto.SyncResponse{Path: r.Path}, zkproto.ErrOK
	case *zkproto.SetWatches:
		c.setWatches(tree, r.RelativeZxid, r.DataWatches, r.ExistWatches, r.ChildWatches, nil, nil)
		return nil, zkproto.ErrOK
	case *zkproto.SetWatches2:
		c.setWatches(tree, r.RelativeZxid, r.DataWatches, r.ExistWatches, r.ChildWatches, r.PersistentWatches, r.PersistentRecursiveWatches)
		return nil, zkproto.ErrOK
	case *zkproto.AddWatchRequest:
		return c.addWatch(r)
	case *zkproto.CheckWatchesRequest:
		return nil, c.checkWatches(r.Path, r.Type, false)
	case *zkproto.RemoveWatchesRequest:
		return nil, c.checkWatches(r.Path, r.Type, true)
	case *zkproto.MultiRequest:
		return c.multiRead(tree, r), zkproto.ErrOK
	}
	if cl.op == zkproto.OpWhoAmI {
		return c.whoAmI(), zkproto.ErrOK
	}
	return nil, zkproto.ErrUnimplemented
}

// sync waits until this server has applied what the leader had committed
// when it was called. The wait ends with the connection (the writer runs
// it, and a close must not be left waiting for a leader) and after the
// session timeout: without a leader by then the client would have given up
// on this server anyway.
func (c *conn) sync() error {
	ctx, cancel := context.WithTimeout(c.life, c.sessionTimeout)
	defer cancel()
	return c.srv.repl.ReadIndex(ctx)
}

func (c *conn) checkACL(tree *znode.Tree, path string, perm int32) zkproto.Err {
	ids, super := c.identities()
	return tree.CheckACL(path, perm, ids, super)
}

// exists registers the watch first, so a change between the read and the
// registration cannot be missed.
func (c *conn) exists(tree *znode.Tree, r *zkproto.ExistsRequest) (zkproto.Record, zkproto.Err) {
	if r.Watch {
		c.srv.watches.add(watchData, r.Path, c)
	}
	st, err := tree.Stat(r.Path)
	if err != zkproto.ErrOK {
		return nil, err
	}
	c.srv.stats.read(r.Path, 0)
	return &zkproto.ExistsResponse{Stat: st}, zkproto.ErrOK
}

func (c *conn) getData(tree *znode.Tree, path string, watch bool) (zkproto.Record, zkproto.Err) {
	if !watch {
		// One lookup for the ACL check and the read (the hot path; a
		// getData without a watch and nothing queued before it is
		// answered by getDataNow, inline.go, the same way).
		ids, super := c.identities()
		data, st, err := tree.GetChecked(path, zkproto.PermRead, ids, super)
		if err != zkproto.ErrOK {
			return nil, err
		}
		c.srv.stats.read(path, int64(len(data)))
		return &zkproto.GetDataResponse{Data: data, Stat: st}, zkproto.ErrOK
	}
	if err := c.checkACL(tree, path, zkproto.PermRead); err != zkproto.ErrOK {
		return nil, err
	}
	if watch {
		c.srv.watches.add(watchData, path, c)
	}
	data, st, err := tree.Get(path)
	if err != zkproto.ErrOK {
		if watch {
			c.srv.watches.remove(watchData, path, c)
		}
		return nil, err
	}
	c.srv.stats.read(path, int64(len(data)))
	return &zkproto.GetDataResponse{Data: data, Stat: st}, zkproto.ErrOK
}

func (c *conn) getChildren(tree *znode.Tree, op zkproto.OpCode, path string, watch bool) (zkproto.Record, zkproto.Err) {
	if err := c.checkACL(tree, path, zkproto.PermRead); err != zkproto.ErrOK {
		return nil, err
	}
	if watch {
		c.srv.watches.add(watchChild, path, c)
	}
	children, st, err := tree.Children(path)
	if err != zkproto.ErrOK {
		if watch {
			c.srv.watches.remove(watchChild, path, c)
		}
		return nil, err
	}
	if children == nil {
		children = []string{}
	}
	c.srv.stats.readChildren(path, children)
	if op == zkproto.OpGetChildren2 {
		return &zkproto.GetChildren2Response{Children: children, Stat: st}, zkproto.ErrOK
	}
	return &zkproto.GetChildrenResponse{Children: children}, zkproto.ErrOK
}

// getACL needs READ or ADMIN; without ADMIN digest ids are shown as user:x,
// as ZooKeeper 3.8 does.
func (c *conn) getACL(tree *znode.Tree, path string) (zkproto.Record, zkproto.Err) {
	if err := c.checkACL(tree, path, zkproto.PermRead|zkproto.PermAdmin); err != zkproto.ErrOK {
		return nil, err
	}
	acl, st, err := tree.ACL(path)
	if err != zkproto.ErrOK {
		return nil, err
	}
	if c.checkACL(tree, path, zkproto.PermAdmin) != zkproto.ErrOK {
		acl = znode.RedactDigests(acl)
	}
	return &zkproto.GetACLResponse{ACL: acl, Stat: st}, zkproto.ErrOK
}

// setWatches re-registers a reconnecting client's watches and fires the
// ones it missed since relativeZxid (ZooKeeper's DataTree.setWatches).
func (c *conn) setWatches(tree *znode.Tree, rel int64, data, exist, child, persistent, recursive []string) {
	for _, p := range data {
		st, err := tree.Stat(p)
		switch {
		case err != zkproto.ErrOK:
			c.notify(zkproto.EventNodeDeleted, p, nil, -1)
		case st.Mzxid > rel:
			c.notify(zkproto.EventNodeDataChanged, p, nil, -1)
		default:
			c.srv.watches.add(watchData, p, c)
		}
	}
	for _, p := range exist {
		if _, err := tree.Stat(p); err == zkproto.ErrOK {
			c.notify(zkproto.EventNodeCreated, p, nil, -1)
		} else {
			c.srv.watches.add(watchData, p, c)
		}
	}
	for _, p := range child {
		st, err := tree.Stat(p)
		switch {
		case err != zkproto.ErrOK:
			c.notify(zkproto.EventNodeDeleted, p, nil, -1)
		case st.Pzxid > rel:
			c.notify(zkproto.EventNodeChildrenChanged, p, nil, -1)
		default:
			c.srv.watches.add(watchChild, p, c)
		}
	}
	for _, p := range persistent {
		c.srv.watches.add(watchPersistent, p, c)
	}
	for _, p := range recursive {
		c.srv.watches.add(watchRecursive, p, c)
	}
}

func (c *conn) addWatch(r *zkproto.AddWatchRequest) (zkproto.Record, zkproto.Err) {
	switch r.Mode {
	case zkproto.AddWatchPersistent:
		c.srv.watches.add(watchPersistent, r.Path, c)
	case zkproto.AddWatchPersistentRecursive:
		c.srv.watches.add(watchRecursive, r.Path, c)
	default:
		return nil, zkproto.ErrBadArguments
	}
	return &zkproto.ErrorResponse{Err: zkproto.ErrOK}, zkproto.ErrOK
}

// checkWatches reports NoWatcher unless the session has a watch of the
// given type on path; with remove it also drops them.
func (c *conn) checkWatches(path string, typ int32, remove bool) zkproto.Err {
	var kinds []watchKind
	switch typ {
	case zkproto.WatcherChildren:
		kinds = []watchKind{watchChild}
	case zkproto.WatcherData:
		kinds = []watchKind{watchData}
	case zkproto.WatcherAny:
		kinds = []watchKind{watchData, watchChild, watchPersistent, watchRecursive}
	default:
		return zkproto.ErrBadArguments
	}
	found := false
	for _, k := range kinds {
		if remove {
			found = c.srv.watches.remove(k, path, c) || found
		} else {
			found = c.srv.watches.has(k, path, c) || found
		}
	}
	if !found {
		return zkproto.ErrNoWatcher
	}
	return zkproto.ErrOK
}

// multiRead runs each read op on its own; a failing op reports its error
// and the others still answer.
func (c *conn) multiRead(tree *znode.Tree, m *zkproto.MultiRequest) *zkproto.MultiResponse {
	out := &zkproto.MultiResponse{Results: make([]zkproto.MultiResult, len(m.Ops))}
	for i, op := range m.Ops {
		res := &out.Results[i]
		switch r := op.Op.(type) {
		case *zkproto.GetDataRequest:
			rec, err := c.getData(tree, r.Path, false)
			if err != zkproto.ErrOK {
				res.Type, res.Err = zkproto.OpError, err
				continue
			}
			d := rec.(*zkproto.GetDataResponse)
			res.Type, res.Data, res.Stat = zkproto.OpGetData, d.Data, d.Stat
		case *zkproto.GetChildrenRequest:
			rec, err := c.getChildren(tree, zkproto.OpGetChildren, r.Path, false)
			if err != zkproto.ErrOK {
				res.Type, res.Err = zkproto.OpError, err
				continue
			}
			res.Type, res.Children = zkproto.OpGetChildren, rec.(*zkproto.GetChildrenResponse).Children
		default:
			res.Type, res.Err = zkproto.OpError, zkproto.ErrUnimplemented
		}
	}
	return out
}

// whoAmI lists the session's identities as ZooKeeper does: scheme and user
// name (for digest, the part before the colon).
func (c *conn) whoAmI() zkproto.Record {
	ids, _ := c.identities()
	out := &zkproto.WhoAmIResponse{}
	for _, id := range ids {
		user := id.ID
		if id.Scheme == "digest" {
			user, _, _ = strings.Cut(user, ":")
		}
		out.ClientInfo = append(out.ClientInfo, zkproto.ClientInfo{AuthScheme: id.Scheme, User: user})
	}
	return out
}
