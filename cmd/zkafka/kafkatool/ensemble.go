package kafkatool

import (
	"net"
	"sort"
	"strconv"
	"strings"
)

// ensembleMember is one server.N line of /zookeeper/config.
type ensembleMember struct {
	ID     int64
	Role   string // participant or observer
	Client string // host:port of its client port; "" if the line has none
}

// parseEnsembleConfig reads ZooKeeper 3.5+'s dynamic configuration
// (/zookeeper/config):
//
//	server.1=host:2888:3888:participant;0.0.0.0:2181
//	version=100000000
//
// A client address of 0.0.0.0 (or ::) is replaced by the server's own
// host, which is how a client reaches it.
func parseEnsembleConfig(text string) []ensembleMember {
	var out []ensembleMember
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		id, err := strconv.ParseInt(strings.TrimPrefix(k, "server."), 10, 64)
		if !ok || !strings.HasPrefix(k, "server.") || err != nil {
			continue
		}
		m := ensembleMember{ID: id, Role: "participant"}
		peer, client, _ := strings.Cut(v, ";")
		parts := strings.Split(peer, ":")
		host := strings.Trim(strings.Join(parts[:max(len(parts)-3, 1)], ":"), "[]")
		if last := parts[len(parts)-1]; last == "observer" || last == "participant" {
			m.Role = last
		} else {
			host = strings.Trim(strings.Join(parts[:max(len(parts)-2, 1)], ":"), "[]")
		}
		if client != "" {
			if !strings.Contains(client, ":") {
				client = net.JoinHostPort(host, client)
			}
			if h, p, err := net.SplitHostPort(client); err == nil {
				if h == "0.0.0.0" || h == "::" || h == "" {
					h = host
				}
				m.Client = net.JoinHostPort(h, p)
			}
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ensembleAddrs returns the client addresses of every ensemble member
// that /zookeeper/config names, else the servers of --zookeeper.
func ensembleAddrs(z *zkClient) []string {
	data, _, err := z.Get("/zookeeper/config") // outside any chroot
	if err == nil {
		var addrs []string
		for _, m := range parseEnsembleConfig(string(data)) {
			if m.Client != "" {
				addrs = append(addrs, m.Client)
			}
		}
		if len(addrs) > 0 {
			return addrs
		}
	}
	return z.servers
}
