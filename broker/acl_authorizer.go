package broker

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/internal/x509name"
)

// The ACL authorizer (authorizer.class.name=kafka.security.authorizer.AclAuthorizer):
// the ACLs live in ZooKeeper in Kafka's layout (zkmeta/acl.go), every
// broker keeps all of them in an authz.Cache, and a change made through
// any broker reaches the others through the change notifications, as
// Kafka's AclAuthorizer and ZkNodeChangeNotificationListener do:
//
//   - New creates the ACL paths and loads every pattern's znode; the
//     change loops (started with the cluster) then handle every
//     notification still there, and each new one, by reloading the
//     pattern it names (so a change between the load and the watch is not
//     lost), and delete those older than aclChangeExpiry (15 minutes, as
//     Kafka's ZkNodeChangeNotificationListener).
//   - A change to a pattern (updateResource) reads the pattern's ACLs and
//     znode version (from the cache, or ZooKeeper if the cache has none),
//     computes the new set, and writes it with that version, or creates
//     the znode, or deletes it when no ACL is left; the write and its
//     change notification go in one multi (Kafka writes them one after
//     the other). A lost race (BADVERSION, NODEEXISTS, NONODE) re-reads
//     from ZooKeeper and tries again, up to aclMaxUpdateRetries times
//     after a 100-150 ms pause, as Kafka.
//   - mu serializes the changes made here and the reloads, as
//     AclAuthorizer's lock; authorization reads the cache alone.

const (
	aclChangeExpiry     = 15 * time.Minute
	aclMaxUpdateRetries = 10
)

type aclAuthorizer struct {
	b     *Broker
	cache *authz.Cache
	mu    sync.Mutex
	// versions are the znode versions of the cached patterns (a.mu held).
	versions map[authz.Pattern]int32
	// mapper turns a client certificate's DN into its principal's name
	// (ssl.principal.mapping.rules; principal.go).
	mapper *x509name.Mapper
}

// newACLAuthorizer creates the ACL znodes if missing and loads every ACL.
func newACLAuthorizer(b *Broker) (*aclAuthorizer, error) {
	a := &aclAuthorizer{b: b, cache: authz.NewCache(b.cfg.Authz.SuperUsers, b.cfg.Authz.AllowEveryoneIfNoACL),
		versions: map[authz.Pattern]int32{}}
	for _, p := range zkmeta.ACLPaths() {
		if err := b.zk.EnsurePersistent(p); err != nil {
			return nil, err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, pt := range []authz.PatternType{authz.PatternLiteral, authz.PatternPrefixed} {
		store := zkmeta.ACLStorePath(pt)
		types, err := b.zk.Children(store)
		if err != nil {
			return nil, err
		}
		for _, tn := range types {
			rt := authz.ParseResourceType(tn)
			if !rt.Known() || rt == authz.ResourceAny {
				b.log.Warn("ignoring unknown ACL resource type", "path", store+"/"+tn)
				continue
			}
			names, err := b.zk.Children(store + "/" + tn)
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				if err := a.reloadLocked(authz.Pattern{Type: rt, Name: n, PatternType: pt}); err != nil {
					return nil, err
				}
			}
		}
	}
	b.log.Info("ACL authorizer loaded", "patterns", len(a.versions), "super_users", strings.Join(b.cfg.Authz.SuperUsers, ";"))
	return a, nil
}

// readZK reads p's ACLs and znode version; exists is false with no znode.
func (a *aclAuthorizer) readZK(p authz.Pattern) (entries []authz.Entry, version int32, exists bool, err error) {
	data, st, err := a.b.zk.Get(zkmeta.ACLPath(p))
	if errors.Is(err, zk.ErrNoNode) {
		return nil, -1, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	entries, err = zkmeta.DecodeACLs(data)
	if err != nil {
		return nil, 0, false, fmt.Errorf("%s: %w", zkmeta.ACLPath(p), err)
	}
	return entries, st.Version, true, nil
}

// reloadLocked puts p's ACLs as ZooKeeper has them into the cache; a.mu
// must be held.
func (a *aclAuthorizer) reloadLocked(p authz.Pattern) error {
	entries, version, exists, err := a.readZK(p)
	if err != nil {
		return err
	}
	a.setLocked(p, entries, version, exists)
	return nil
}

func (a *aclAuthorizer) setLocked(p authz.Pattern, entries []authz.Entry, version int32, exists bool) {
	a.cache.Set(p, entries)
	if exists && len(entries) > 0 {
		a.versions[p] = version
	} else {
		delete(a.versions, p)
	}
}

// errACLUpdateConflict: a pattern's znode kept changing under us.
var errACLUpdateConflict = errors.New("failed to update ACLs: the znode kept changing")

// updateResourceLocked changes p's ACLs to next(current) in ZooKeeper
// with compare-and-set (see the file comment) and in the cache; a.mu must
// be held. It reports whether the ACLs changed.
func (a *aclAuthorizer) updateResourceLocked(p authz.Pattern, next func([]authz.Entry) []authz.Entry) (bool, error) {
	cur, haveCached := a.cache.Get(p)
	version, exists := a.versions[p]
	if !haveCached {
		var err error
		if cur, version, exists, err = a.readZK(p); err != nil {
			return false, err
		}
	}
	path := zkmeta.ACLPath(p)
	note := func() *zk.CreateRequest {
		return &zk.CreateRequest{Path: zkmeta.ACLChangesPath(p.PatternType) + "/" + zkmeta.ACLChangePrefix,
			Data: zkmeta.EncodeACLChange(p), Flags: zk.FlagSequence}
	}
	for retry := 0; ; retry++ {
		want := next(cur)
		changed := !slices.Equal(want, cur)
		var err error
		newVersion := int32(0)
		switch {
		case !changed && (exists || len(want) == 0):
		case len(want) == 0:
			err = a.b.zk.Multi(&zk.DeleteRequest{Path: path, Version: version}, note())
		case exists:
			err, newVersion = a.b.zk.Multi(&zk.SetDataRequest{Path: path, Data: zkmeta.EncodeACLs(want), Version: version}, note()), version+1
		default:
			err = a.b.zk.Multi(&zk.CreateRequest{Path: path, Data: zkmeta.EncodeACLs(want)}, note())
		}
		if err == nil {
			a.setLocked(p, want, newVersion, len(want) > 0)
			if changed {
				a.b.log.Info("updated ACLs", "resource", p.Type.String()+":"+p.PatternType.String()+":"+p.Name, "version", newVersion)
			}
			return changed, nil
		}
		if !errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, zk.ErrNodeExists) && !errors.Is(err, zk.ErrNoNode) {
			return false, err
		}
		if retry >= aclMaxUpdateRetries {
			return false, errACLUpdateConflict
		}
		if !a.b.sleep(time.Duration(100+rand.IntN(50)) * time.Millisecond) {
			return false, ErrServerClosed
		}
		if cur, version, exists, err = a.readZK(p); err != nil {
			return false, err
		}
	}
}

// changesLoop follows one change path until Shutdown.
func (a *aclAuthorizer) changesLoop(path string) {
	last := int64(-1)
	for {
		names, ch, err := a.b.zk.ChildrenW(path)
		if err != nil {
			if !a.b.sleep(time.Second) {
				return
			}
			continue
		}
		last = a.handleChanges(path, names, last)
		select {
		case <-ch:
		case <-a.b.done:
			return
		}
	}
}

// handleChanges reloads the patterns named by the notifications after
// last, in order, deletes the expired ones, and returns the last
// sequence handled.
func (a *aclAuthorizer) handleChanges(path string, names []string, last int64) int64 {
	type note struct {
		name string
		seq  int64
	}
	var notes []note
	for _, n := range names {
		s, ok := strings.CutPrefix(n, zkmeta.ACLChangePrefix)
		if seq, err := strconv.ParseInt(s, 10, 64); ok && err == nil {
			notes = append(notes, note{n, seq})
		}
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].seq < notes[j].seq })
	// Kafka reads every notification at each change to purge the expired
	// ones; they are in creation order, so the reads stop at the first
	// one that has not expired (and at the new ones, read anyway).
	purging := true
	for _, n := range notes {
		if !purging && n.seq <= last {
			continue
		}
		data, st, err := a.b.zk.Get(path + "/" + n.name)
		if err != nil {
			continue // purged by another broker
		}
		if purging = purging && time.Since(time.UnixMilli(st.Ctime)) > aclChangeExpiry; purging {
			a.b.zk.Conn.Delete(a.b.zk.Path(path+"/"+n.name), -1)
		}
		if n.seq <= last {
			continue
		}
		last = n.seq
		p, err := zkmeta.DecodeACLChange(path, data)
		if err != nil {
			a.b.log.Warn("ignoring an ACL change notification", "path", path+"/"+n.name, "err", err)
			continue
		}
		a.mu.Lock()
		err = a.reloadLocked(p)
		a.mu.Unlock()
		if err != nil {
			a.b.log.Warn("reloading changed ACLs", "resource", p, "err", err)
		}
	}
	return last
}

// initAuthorizer loads the ACL authorizer when one is configured.
func (b *Broker) initAuthorizer() error {
	if !b.cfg.Authz.Enabled() {
		return nil
	}
	mapper, err := x509name.ParseMappingRules(b.cfg.Authz.PrincipalMappingRules)
	if err != nil {
		return fmt.Errorf("ssl.principal.mapping.rules: %w", err)
	}
	a, err := newACLAuthorizer(b)
	if err != nil {
		return fmt.Errorf("ACL authorizer: %w", err)
	}
	a.mapper = mapper
	b.acls = a
	return nil
}

// startACLChangeLoops follows both change paths (with the cluster).
func (b *Broker) startACLChangeLoops() {
	if a := b.acls; a != nil {
		b.goTracked("zk-acl-changes", func() { a.changesLoop(zkmeta.LiteralACLChangesPath) })
		b.goTracked("zk-acl-extended-changes", func() { a.changesLoop(zkmeta.ExtendedACLChanges) })
	}
}
