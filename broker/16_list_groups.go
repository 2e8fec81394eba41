package broker

import (
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// ListGroups (key 16), v0-5, via kmsg.
//
// The groups this broker coordinates: those in memory and those with a
// znode under /consumers (loaded on the way, so their state is known).
// v4 filters by state (case-insensitive, as Kafka), v5 by type: every
// group here is "classic". While a partition's groups are being loaded
// (group_load.go) the error is COORDINATOR_LOAD_IN_PROGRESS, with the
// groups loaded so far, as Kafka.

func init() { regKey(kproto.KeyListGroups, 0, 5, groupHandler(handleListGroups)) }

func handleListGroups(r groupRequest, req *kmsg.ListGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	co := r.c.b.groups
	names, err := co.b.zk.Children("/consumers")
	if err != nil {
		resp.ErrorCode = ec(kproto.CodeCoordinatorNotAvailable)
		return resp
	}
	seen := map[string]bool{}
	all := r.c.allowedCluster(authz.OpDescribe) // else the groups it may DESCRIBE
	for _, g := range co.loadedGroups() {
		names = append(names, g.name)
	}
	sort.Strings(names)
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		if !all && !r.c.allowedGroup(authz.OpDescribe, name) {
			continue
		}
		if !co.b.coordinates(name) {
			continue
		}
		g, code := co.lookup(name, false)
		if code == ec(kproto.CodeCoordinatorLoadInProgress) {
			resp.ErrorCode = code // as Kafka: the groups loaded so far, and this
		}
		if code != 0 || g == nil {
			continue
		}
		g.mu.Lock()
		state, ptype := g.state, g.protocolType
		g.mu.Unlock()
		if state == groupDead || !matchesFilter(req.StatesFilter, state.String()) ||
			!matchesFilter(req.TypesFilter, "classic") {
			continue
		}
		rg := kmsg.NewListGroupsResponseGroup()
		rg.Group, rg.ProtocolType, rg.GroupState, rg.GroupType = name, ptype, state.String(), "classic"
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

func matchesFilter(filter []string, v string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, f := range filter {
		if strings.EqualFold(f, v) {
			return true
		}
	}
	return false
}
