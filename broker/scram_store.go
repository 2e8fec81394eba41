package broker

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/xdg-go/scram"
	"github.com/zkafka/zkafka/broker/zkmeta"
)

// The SCRAM credentials, where Kafka keeps them in ZooKeeper mode: the
// config znode of each user, /config/users/{sanitized user}, version 1,
// one config entry per mechanism (other entries, quotas, are kept as
// they are):
//
//	{"version":1,"config":{"SCRAM-SHA-256":"salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=4096"}}
//
// A change writes the znode and a /config/changes notification
// {"version":2,"entity_path":"users/{sanitized user}"}; every broker
// (config_changes.go) reloads that user into its cache, which
// authentications read. At start a broker loads every user.

// scramStore is the broker's credential cache.
type scramStore struct {
	b  *Broker
	mu struct {
		sync.RWMutex
		users map[string]map[string]scram.StoredCredentials // user → mechanism → credential
	}
}

func newScramStore(b *Broker) *scramStore {
	st := &scramStore{b: b}
	st.mu.users = map[string]map[string]scram.StoredCredentials{}
	return st
}

// lookup is user's credential for mech.
func (st *scramStore) lookup(user, mech string) (scram.StoredCredentials, bool) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	c, ok := st.mu.users[user][mech]
	return c, ok
}

// loadAll reads every user's credentials (at start).
func (st *scramStore) loadAll() error {
	names, err := st.b.zk.Children(zkmeta.ConfigUsersPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, n := range names {
		st.reload(desanitize(n))
	}
	return nil
}

// reload reads user's credentials again (a change notification).
func (st *scramStore) reload(user string) {
	cfg, _, err := st.readUser(user)
	creds := map[string]scram.StoredCredentials{}
	if err != nil {
		st.b.log.Warn("reading SCRAM credentials", "user", user, "err", err)
	}
	for mech := range scramMechanisms {
		if v, ok := cfg[mech]; ok {
			c, err := parseScramCredential(v)
			if err != nil {
				st.b.log.Warn("bad SCRAM credential in ZooKeeper; ignoring it", "user", user, "mechanism", mech, "err", err)
				continue
			}
			creds[mech] = c
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(creds) == 0 {
		delete(st.mu.users, user)
	} else {
		st.mu.users[user] = creds
	}
}

// readUser reads /config/users/{user}'s config and version (-1: no znode).
func (st *scramStore) readUser(user string) (map[string]string, int32, error) {
	data, s, err := st.b.zk.Get(zkmeta.UserConfigPath(sanitize(user)))
	if errors.Is(err, zk.ErrNoNode) {
		return map[string]string{}, -1, nil
	}
	if err != nil {
		return map[string]string{}, 0, err
	}
	var z zkmeta.ConfigZNode
	if err := json.Unmarshal(data, &z); err != nil {
		return map[string]string{}, 0, fmt.Errorf("%s: %w", zkmeta.UserConfigPath(sanitize(user)), err)
	}
	if z.Config == nil {
		z.Config = map[string]string{}
	}
	return z.Config, s.Version, nil
}

// writeUser stores user's config (a compare-and-set on version, -1
// creates) with its change notification, in one multi.
func (st *scramStore) writeUser(user string, cfg map[string]string, version int32) error {
	path := zkmeta.UserConfigPath(sanitize(user))
	data := zkmeta.MustJSON(zkmeta.ConfigZNode{Version: 1, Config: cfg})
	var write any = &zk.SetDataRequest{Path: path, Data: data, Version: version}
	if version < 0 {
		write = &zk.CreateRequest{Path: path, Data: data}
	}
	note := &zk.CreateRequest{Path: zkmeta.ConfigChangePrefix, Flags: zk.FlagSequence,
		Data: zkmeta.MustJSON(zkmeta.ConfigChangeZNode{Version: 2, EntityPath: "users/" + sanitize(user)})}
	return st.b.zk.Multi(write, note)
}

// iterations reads from ZooKeeper the SCRAM mechanisms and iterations of
// users (every user when none is named); a user without a credential is
// left out.
func (st *scramStore) iterations(users []string) (map[string]map[string]int, error) {
	if len(users) == 0 {
		names, err := st.b.zk.Children(zkmeta.ConfigUsersPath)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, err
		}
		for _, n := range names {
			users = append(users, desanitize(n))
		}
	}
	out := map[string]map[string]int{}
	for _, u := range users {
		if u == "" {
			continue
		}
		cfg, _, err := st.readUser(u)
		if err != nil {
			return nil, err
		}
		for mech := range scramMechanisms {
			if v, ok := cfg[mech]; ok {
				c, err := parseScramCredential(v)
				if err != nil {
					return nil, fmt.Errorf("user %s, %s: %w", u, mech, err)
				}
				if out[u] == nil {
					out[u] = map[string]int{}
				}
				out[u][mech] = c.Iters
			}
		}
	}
	return out, nil
}

// formatScramCredential is Kafka's ScramCredentialUtils.credentialToString.
func formatScramCredential(c scram.StoredCredentials) string {
	b64 := base64.StdEncoding.EncodeToString
	return "salt=" + b64([]byte(c.Salt)) + ",stored_key=" + b64(c.StoredKey) + ",server_key=" + b64(c.ServerKey) +
		",iterations=" + strconv.Itoa(c.Iters)
}

// parseScramCredential is Kafka's ScramCredentialUtils.credentialFromString.
func parseScramCredential(s string) (scram.StoredCredentials, error) {
	f := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return scram.StoredCredentials{}, fmt.Errorf("want key=value, got an entry without '='")
		}
		f[k] = v
	}
	var c scram.StoredCredentials
	var err error
	dec := func(k string) []byte {
		v, ok := f[k]
		if !ok && err == nil {
			err = fmt.Errorf("no %s", k)
		}
		b, derr := base64.StdEncoding.DecodeString(v)
		if derr != nil && err == nil {
			err = fmt.Errorf("%s: %w", k, derr)
		}
		return b
	}
	c.Salt, c.StoredKey, c.ServerKey = string(dec("salt")), dec("stored_key"), dec("server_key")
	if err != nil {
		return c, err
	}
	if c.Iters, err = strconv.Atoi(f["iterations"]); err != nil || c.Iters <= 0 {
		return c, fmt.Errorf("iterations: want a positive integer")
	}
	return c, nil
}

// sanitize is Kafka's Sanitizer.sanitize, the user's name in znode paths:
// URL encoding (UTF-8, upper-case hex) of everything but letters, digits
// and ._-, a space as %20 and '*' as %2A.
func sanitize(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// desanitize is Kafka's Sanitizer.desanitize (URLDecoder.decode).
func desanitize(name string) string {
	if s, err := url.QueryUnescape(name); err == nil {
		return s
	}
	return name
}

// changedUser is the user a notification names (users/NAME; not a
// users/NAME/clients/ID quota entity).
func changedUser(data []byte) (string, bool) {
	var z zkmeta.ConfigChangeZNode
	if json.Unmarshal(data, &z) != nil {
		return "", false
	}
	if z.Version == 1 {
		return desanitize(z.EntityName), z.EntityType == "users" && z.EntityName != ""
	}
	name, ok := strings.CutPrefix(z.EntityPath, "users/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", false
	}
	return desanitize(name), true
}
