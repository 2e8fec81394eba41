package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// DeleteGroups (key 42), v0-2, via kmsg.
//
// Per group: empty id INVALID_GROUP_ID, unknown GROUP_ID_NOT_FOUND, with
// members NON_EMPTY_GROUP; otherwise the group turns Dead and
// /consumers/{group} is deleted with everything under it.

func init() { regKey(kproto.KeyDeleteGroups, 0, 2, groupHandler(handleDeleteGroups)) }

func handleDeleteGroups(r groupRequest, req *kmsg.DeleteGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, name := range req.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = name
		rg.ErrorCode = ec(kproto.CodeGroupAuthorizationFailed)
		if r.c.allowedGroup(authz.OpDelete, name) {
			rg.ErrorCode = r.c.b.groups.deleteGroup(name)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

func (c *coordinator) deleteGroup(name string) int16 {
	if name == "" {
		return ec(kproto.CodeInvalidGroupID)
	}
	g, code := c.lookup(name, false)
	if code != 0 {
		return code
	}
	if g == nil {
		return ec(kproto.CodeGroupIDNotFound)
	}
	g.mu.Lock()
	switch {
	case g.state == groupDead:
		g.mu.Unlock()
		return ec(kproto.CodeGroupIDNotFound)
	case len(g.members) > 0 || g.state != groupEmpty:
		g.mu.Unlock()
		return ec(kproto.CodeNonEmptyGroup)
	}
	out := g.dieLocked(ec(kproto.CodeGroupIDNotFound))
	g.mu.Unlock()
	g.finish(out)
	c.remove(g)
	if err := c.deleteGroupZNodes(name); err != nil {
		c.b.log.Warn("deleting group znodes", "group", name, "err", err)
		return ec(kproto.CodeCoordinatorNotAvailable)
	}
	g.groupTombstones()
	return 0
}
