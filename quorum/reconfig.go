package quorum

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zkafka/zkafka/internal/properties"
	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/zkproto"
)

// The pieces of dynamic reconfiguration (opcode 16) that do not depend on
// the running ensemble, after ZooKeeper 3.8's PrepRequestProcessor (case
// OpCode.reconfig) and QuorumPeerConfig.parseDynamicConfig; the request
// path and the apply side are in reconfig_request.go.

// reconfigAllowed is the admin check of a reconfig: the session needs
// WRITE on /zookeeper/config (world:anyone READ by default, so only the
// super user passes unless the ACL was changed).
func reconfigAllowed(check func(path string, perm int32) zkproto.Err) zkproto.Err {
	return check("/zookeeper/config", zkproto.PermWrite)
}

// nextMembers computes the configuration that req asks for from the
// current servers at version cur: BadVersion when req.CurConfigID is not
// -1 and not cur; the new members (non-incremental) or the current ones
// with the leaving ids removed and the joining servers added or changed
// (incremental); BadArguments for a server string ZooKeeper refuses (each
// joining server needs its client port: "server.N=host:p:e[:role];[host:]client"),
// an address used twice, or fewer than two participants (standaloneEnabled).
// null and empty strings are the same here (the codec reads both as "").
func nextMembers(current []ServerSpec, cur uint64, req *zkproto.ReconfigRequest) ([]ServerSpec, zkproto.Err) {
	if req.CurConfigID != -1 && uint64(req.CurConfigID) != cur {
		return nil, zkproto.ErrBadVersion
	}
	var next []ServerSpec
	var err zkproto.Err
	if req.NewMembers != "" {
		next, err = parseMembers(req.NewMembers)
	} else {
		next, err = incremental(current, req.JoiningServers, req.LeavingServers)
	}
	if err != zkproto.ErrOK {
		return nil, err
	}
	slices.SortFunc(next, func(a, b ServerSpec) int { return cmp.Compare(a.ID, b.ID) })
	p := configParser{c: Config{Servers: next}, servers: map[uint64]properties.Property{}}
	for _, sv := range next {
		p.servers[sv.ID] = properties.Property{Key: "server." + strconv.FormatUint(sv.ID, 10)}
	}
	if p.checkAddresses() != nil {
		return nil, zkproto.ErrBadArguments
	}
	voters := 0
	for _, sv := range next {
		if !sv.Observer {
			voters++
		}
	}
	if voters < 2 {
		return nil, zkproto.ErrBadArguments // "new configuration must include at least 2 followers"
	}
	return next, zkproto.ErrOK
}

// parseMembers parses the server.N lines of a non-incremental reconfig,
// separated by commas or newlines; only server.N (and version) keys.
func parseMembers(members string) ([]ServerSpec, zkproto.Err) {
	props, err := properties.Load(strings.NewReader(strings.ReplaceAll(members, ",", "\n")))
	if err != nil {
		return nil, zkproto.ErrBadArguments
	}
	p := configParser{servers: map[uint64]properties.Property{}}
	for _, prop := range props {
		switch {
		case prop.Key == "version":
		case strings.HasPrefix(prop.Key, "server."):
			if p.addServer(prop, prop.Trimmed()) != nil {
				return nil, zkproto.ErrBadArguments
			}
		default:
			return nil, zkproto.ErrBadArguments // "Unrecognised parameter"
		}
	}
	return p.c.Servers, zkproto.ErrOK
}

// incremental applies -remove ids and -add servers to current.
func incremental(current []ServerSpec, joining, leaving string) ([]ServerSpec, zkproto.Err) {
	byID := map[uint64]ServerSpec{}
	for _, sv := range current {
		byID[sv.ID] = sv
	}
	for _, s := range splitList(leaving) {
		id, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, zkproto.ErrBadArguments
		}
		delete(byID, id)
	}
	for _, s := range splitList(joining) {
		key, spec, ok := strings.Cut(s, "=")
		if !ok || strings.Contains(spec, "=") {
			return nil, zkproto.ErrBadArguments // "Wrong format of server string"
		}
		p := configParser{servers: map[uint64]properties.Property{}}
		if p.addServer(properties.Property{Key: strings.TrimSpace(key), Value: spec}, strings.TrimSpace(spec)) != nil {
			return nil, zkproto.ErrBadArguments
		}
		sv := p.c.Servers[0]
		if sv.ClientPort == 0 {
			return nil, zkproto.ErrBadArguments // "each server should have 3 ports specified"
		}
		byID[sv.ID] = sv
	}
	next := make([]ServerSpec, 0, len(byID))
	for _, sv := range byID {
		next = append(next, sv)
	}
	return next, zkproto.ErrOK
}

// splitList is ZooKeeper's StringUtils.split on ",": trimmed, empty
// pieces dropped.
func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// membershipChange is the raft change from old to next: new voters and
// observers made voters (AddNode), new observers and voters made
// observers (AddLearnerNode), servers gone (RemoveNode). nil when the
// members and their roles are the same (an address change only).
func membershipChange(old, next []ServerSpec) *raftpb.ConfChangeV2 {
	cc := &raftpb.ConfChangeV2{}
	add := func(typ raftpb.ConfChangeType, id uint64) {
		cc.Changes = append(cc.Changes, &raftpb.ConfChangeSingle{Type: typ.Enum(), NodeId: &id})
	}
	was := map[uint64]ServerSpec{}
	for _, sv := range old {
		was[sv.ID] = sv
	}
	is := map[uint64]bool{}
	for _, sv := range next {
		is[sv.ID] = true
		prev, ok := was[sv.ID]
		switch {
		case ok && prev.Observer == sv.Observer:
		case sv.Observer:
			add(raftpb.ConfChangeType_ConfChangeAddLearnerNode, sv.ID)
		default:
			add(raftpb.ConfChangeType_ConfChangeAddNode, sv.ID)
		}
	}
	for _, sv := range old {
		if !is[sv.ID] {
			add(raftpb.ConfChangeType_ConfChangeRemoveNode, sv.ID)
		}
	}
	if len(cc.Changes) == 0 {
		return nil
	}
	return cc
}

// quorumSynced is Leader.isQuorumSynced on raft: a majority of next's
// participants are the leader itself or members the leader has heard from
// within the last election timeout (a joining server is not a member yet
// and does not count, as it does not for ZooKeeper until it has synced).
// Otherwise the reconfig fails with NewConfigNoQuorum.
func quorumSynced(next []ServerSpec, st raftnode.Status) bool {
	voters, synced := 0, 0
	for _, sv := range next {
		if sv.Observer {
			continue
		}
		voters++
		if pr, ok := st.Progress[sv.ID]; sv.ID == st.ID || ok && pr.Active {
			synced++
		}
	}
	return synced > voters/2
}

// configText is /zookeeper/config for servers at version (the zxid of the
// reconfig, written in hex), in the format of DynamicConfigText.
func (c *Config) configText(servers []ServerSpec, version uint64) string {
	cc := *c
	cc.Servers, cc.ConfigVersion = servers, version
	return cc.DynamicConfigText()
}
