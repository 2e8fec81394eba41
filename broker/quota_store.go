package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/zkmeta"
)

// The client quotas in ZooKeeper, where Kafka's ZooKeeper mode keeps them
// (AdminZkClient.changeConfigs): the config znode of the entity, version
// 1, the quota keys beside any others (a user's SCRAM credentials share
// /config/users/{user}; every write here is a read-modify-write of the
// whole config, compare-and-set on the znode's version, so neither loses
// the other's keys):
//
//	/config/users/{user}                  {"version":1,"config":{"producer_byte_rate":"1048576"}}
//	/config/users/{user}/clients/{client} {"version":1,"config":{"request_percentage":"50.0"}}
//	/config/clients/{client}              {"version":1,"config":{"consumer_byte_rate":"2048"}}
//
// with a notification {"version":2,"entity_path":"users/{user}/clients/{client}"}
// in /config/changes; every broker (config_changes.go) reloads the named
// entity into its quotaManager. At start a broker loads every entity. A
// znode whose config loses its last key stays, as in Kafka.

// quotaZNodePath is the config znode of an entity.
func quotaZNodePath(e quotaEntity) string { return "/config/" + e.path() }

// readConfigZNode reads a config znode: its config and version (-1: no
// znode). An empty znode (a parent Kafka's createRecursive made) has an
// empty config.
func (b *Broker) readConfigZNode(path string) (map[string]string, int32, error) {
	data, st, err := b.zk.Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return map[string]string{}, -1, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var z zkmeta.ConfigZNode
	if len(data) > 0 {
		if err := json.Unmarshal(data, &z); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
	}
	if z.Config == nil {
		z.Config = map[string]string{}
	}
	return z.Config, st.Version, nil
}

// readQuotaEntities reads every entity that has a config znode, with its
// whole config (DescribeClientQuotas, and loading at start).
func (b *Broker) readQuotaEntities() (map[quotaEntity]map[string]string, error) {
	out := map[quotaEntity]map[string]string{}
	read := func(e quotaEntity) error {
		cfg, v, err := b.readConfigZNode(quotaZNodePath(e))
		if err == nil && v >= 0 {
			out[e] = cfg
		}
		return err
	}
	children := func(p string) ([]string, error) {
		names, err := b.zk.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, nil
		}
		return names, err
	}
	users, err := children(zkmeta.ConfigUsersPath)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		if err := read(quotaEntity{user: u}); err != nil {
			return nil, err
		}
		clients, err := children(zkmeta.ConfigUsersPath + "/" + u + "/clients")
		if err != nil {
			return nil, err
		}
		for _, c := range clients {
			if err := read(quotaEntity{user: u, client: c}); err != nil {
				return nil, err
			}
		}
	}
	clients, err := children(zkmeta.ConfigClientsPath)
	if err != nil {
		return nil, err
	}
	for _, c := range clients {
		if err := read(quotaEntity{client: c}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// loadQuotas reads every entity's quotas into the quota manager (at start).
func (b *Broker) loadQuotas() error {
	all, err := b.readQuotaEntities()
	if err != nil {
		return err
	}
	t := quotaTable{}
	for e, cfg := range all {
		if v := quotaValuesOf(cfg); !v.empty() {
			t[e] = v
		}
	}
	b.quotas.setTable(t)
	return nil
}

// reloadQuota reads one entity's quotas again (a change notification).
func (b *Broker) reloadQuota(e quotaEntity) {
	cfg, _, err := b.readConfigZNode(quotaZNodePath(e))
	if err != nil {
		b.log.Warn("reading client quotas", "entity", e.path(), "err", err)
		return
	}
	b.quotas.set(e, quotaValuesOf(cfg))
}

// changedQuotaEntity is the user or client entity a notification names.
func changedQuotaEntity(data []byte) (quotaEntity, bool) {
	var z zkmeta.ConfigChangeZNode
	if json.Unmarshal(data, &z) != nil {
		return quotaEntity{}, false
	}
	p := z.EntityPath
	if z.Version == 1 {
		p = z.EntityType + "/" + z.EntityName
	}
	if !strings.HasPrefix(p, "users/") && !strings.HasPrefix(p, "clients/") {
		return quotaEntity{}, false
	}
	return quotaEntityOfPath(p)
}

// errQuotaConflict is a write that lost a race for the znode too often.
var errQuotaConflict = errors.New("the config znode kept changing while it was written")

// alterQuotaZNode applies edit to the entity's config and writes it with
// its change notification, unless validateOnly. edit sees the whole
// config (SCRAM keys included) and returns an error to write nothing. A
// concurrent write (version conflict) makes it read and edit again.
func (b *Broker) alterQuotaZNode(e quotaEntity, validateOnly bool, edit func(cfg map[string]string) error) error {
	path := quotaZNodePath(e)
	for range 5 {
		cfg, version, err := b.readConfigZNode(path)
		if err != nil {
			return err
		}
		if err := edit(cfg); err != nil {
			return err
		}
		if validateOnly {
			return nil
		}
		if version < 0 {
			if err := b.ensureQuotaParents(e); err != nil {
				return err
			}
		}
		data := zkmeta.MustJSON(zkmeta.ConfigZNode{Version: 1, Config: cfg})
		var write any = &zk.SetDataRequest{Path: path, Data: data, Version: version}
		if version < 0 {
			write = &zk.CreateRequest{Path: path, Data: data}
		}
		note := &zk.CreateRequest{Path: zkmeta.ConfigChangePrefix, Flags: zk.FlagSequence,
			Data: zkmeta.MustJSON(zkmeta.ConfigChangeZNode{Version: 2, EntityPath: e.path()})}
		err = b.zk.Multi(write, note)
		if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists) {
			continue
		}
		return err
	}
	return errQuotaConflict
}

// ensureQuotaParents creates /config/users/{user} and its clients znode
// for a (user, client) entity, with an empty config, as Kafka's
// createRecursive does (zkafka writes the config JSON where Kafka leaves
// the parent empty).
func (b *Broker) ensureQuotaParents(e quotaEntity) error {
	if e.user == "" || e.client == "" {
		return nil
	}
	userPath := zkmeta.ConfigUsersPath + "/" + e.user
	empty := zkmeta.MustJSON(zkmeta.ConfigZNode{Version: 1, Config: map[string]string{}})
	for _, p := range []struct {
		path string
		data []byte
	}{{userPath, empty}, {userPath + "/clients", nil}} {
		if err := b.zk.Create(p.path, p.data, 0); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}
