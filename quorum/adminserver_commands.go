package quorum

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The AdminServer commands with more than a line of their own; each says
// which of Apache ZooKeeper's it is and where zkafka's data differs.

// adminConf is ConfCommand: ZooKeeperServerConf.toMap. ZooKeeper's
// data_dir is its version-2 subdirectory; zkafka's raft log lives in
// dataLogDir/version-2 too.
func (s *Server) adminConf(_ map[string]string, out map[string]any) {
	c := s.cfg
	out["client_port"] = c.ClientPort
	out["data_dir"] = filepath.Join(c.DataDir, "version-2")
	out["data_log_dir"] = filepath.Join(c.DataLogDir, "version-2")
	out["tick_time"] = c.TickTime.Milliseconds()
	out["max_client_cnxns"] = c.MaxClientCnxns
	out["min_session_timeout"] = c.MinSessionTimeout.Milliseconds()
	out["max_session_timeout"] = c.MaxSessionTimeout.Milliseconds()
	out["server_id"] = c.MyID
	out["client_port_listen_backlog"] = -1
}

// adminConnections is ServerCnxn.getConnectionInfo of each connection.
func (s *Server) adminConnections(brief bool) []map[string]any {
	out := []map[string]any{}
	for _, c := range s.connections() {
		info := map[string]any{
			"remote_socket_address": strings.TrimPrefix(javaAddr(c.nc.RemoteAddr()), "/"),
			"interest_ops":          1,
			"outstanding_requests":  len(c.calls),
			"packets_received":      c.received.Load(),
			"packets_sent":          c.sent.Load(),
		}
		if !brief {
			st := c.cstats.snapshot()
			info["session_id"] = c.sessionID()
			info["last_operation"] = st.lastOp
			info["established"] = c.started.UnixMilli()
			info["session_timeout"] = c.sessionTimeout.Milliseconds()
			info["last_cxid"] = st.lastCxid
			info["last_zxid"] = st.lastZxid
			info["last_response_time"] = st.lastRespMs
			info["last_latency"] = st.last
			info["min_latency"] = st.latency.min
			info["avg_latency"] = st.avgLatency
			info["max_latency"] = st.latency.max
		}
		out = append(out, info)
	}
	return out
}

// adminDump is DumpCommand: the sessions by expiry bucket (unix ms, as
// the session tracker's buckets) and each session's ephemerals.
func (s *Server) adminDump(_ map[string]string, out map[string]any) {
	tree := s.tree.Load()
	buckets := map[string][]int64{}
	for id, d := range s.tracker.deadlines() {
		k := strconv.FormatInt(s.bucket(d), 10)
		buckets[k] = append(buckets[k], id)
	}
	ephemerals := map[string][]string{}
	for id := range tree.Sessions() {
		if eph := tree.Ephemerals(id, "/"); len(eph) > 0 || s.stats.ownedEphemerals(id) {
			ephemerals[strconv.FormatInt(id, 10)] = eph
		}
	}
	out["expiry_time_to_session_ids"] = buckets
	out["session_id_to_ephemeral_paths"] = ephemerals
}

// adminLeader is LeaderCommand; a standalone server is not a
// QuorumZooKeeperServer and answers with its error.
func (s *Server) adminLeader(_ map[string]string, out map[string]any) {
	if s.ens == nil {
		out["error"] = "server is not initialized"
		return
	}
	leader := s.ens.leader.Load()
	out["is_leader"] = s.isLeader()
	out["leader_id"] = leader
	out["leader_ip"] = ""
	for _, sv := range s.cfg.Servers {
		if sv.ID == leader {
			out["leader_ip"] = sv.Host
		}
	}
}

// adminMonitor is MonitorCommand: mntr's keys without zk_, numbers as
// JSON numbers.
func (s *Server) adminMonitor(_ map[string]string, out map[string]any) {
	vals := s.mntrValues()
	for _, k := range mntrKeys {
		out[k] = jsonValue(vals[k])
	}
	for _, l := range s.ensembleMonitorLines() {
		out[strings.TrimPrefix(l[0], "zk_")] = jsonValue(l[1])
	}
	for _, name := range mntrSummaries {
		for _, l := range summaryLines(name, summary{}, nil, false) {
			out[strings.TrimPrefix(l[0], "zk_")] = jsonValue(l[1])
		}
	}
	measured := s.stats.measuredLatencies()
	for _, name := range mntrPercentileSummaries {
		sum, hist := measured.of(name)
		for _, l := range summaryLines(name, sum, hist, true) {
			out[strings.TrimPrefix(l[0], "zk_")] = jsonValue(l[1])
		}
	}
	for _, l := range s.stats.namespaceLines() {
		out[strings.TrimPrefix(l[0], "zk_")] = jsonValue(l[1])
	}
}

// jsonValue is an mntr value as the JSON ZooKeeper writes: a number when
// it is one ("" is a key zkafka has no value for: 0).
func jsonValue(v string) any {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	return v
}

// adminSetTraceMask is SetTraceMaskCommand: zkafka has no ZooTrace, so
// the mask is checked and echoed.
func adminSetTraceMask(_ *Server, args map[string]string, out map[string]any) {
	v, ok := args["traceMask"]
	if !ok {
		out["error"] = "setTraceMask requires long traceMask argument"
		return
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		out["error"] = "setTraceMask requires long traceMask argument, got " + v
		return
	}
	out["tracemask"] = n
}

// adminServerStats is SrvrCommand: ServerStats as Jackson writes its
// getters. zkafka does not track response sizes: -1, ZooKeeper's value
// before the first response.
func (s *Server) adminServerStats(out map[string]any) {
	minMs, avgMs, maxMs := s.stats.latency()
	tree := s.tree.Load()
	responses := map[string]any{"last_buffer_size": -1, "min_buffer_size": -1, "max_buffer_size": -1}
	out["version"] = zkVersion
	out["read_only"] = !s.serving()
	out["server_stats"] = map[string]any{
		"packets_sent":                 s.stats.sent.Load(),
		"packets_received":             s.stats.received.Load(),
		"fsync_threshold_exceed_count": 0,
		"client_response_stats":        responses,
		"data_dir_size":                dirSize(s.cfg.DataDir),
		"log_dir_size":                 dirSize(s.cfg.DataLogDir),
		"provider_null":                false,
		"server_state":                 s.mode(),
		"last_processed_zxid":          tree.LastZxid(),
		"outstanding_requests":         s.outstanding(),
		"avg_latency":                  avgMs,
		"max_latency":                  maxMs,
		"min_latency":                  minMs,
		"num_alive_client_connections": len(s.connections()),
		"auth_failed_count":            0,
		"non_mtlsremote_conn_count":    0,
		"non_mtlslocal_conn_count":     0,
		"uptime":                       time.Since(s.started).Milliseconds(),
	}
	out["client_response"] = responses
	out["node_count"] = tree.NodeCount()
	if s.ens != nil && s.isLeader() {
		last, minSize, maxSize := s.stats.proposalSizes().values()
		out["proposal_stats"] = map[string]any{"last_buffer_size": last, "min_buffer_size": minSize, "max_buffer_size": maxSize}
	}
}

// adminSystemProperties is SystemPropertiesCommand. A Go process has no
// Java system properties: it answers envi's keys, the zookeeper.* keys
// its configuration sets, and the Go runtime's.
func (s *Server) adminSystemProperties(_ map[string]string, out map[string]any) {
	for _, kv := range environment() {
		out[kv[0]] = kv[1]
	}
	out["file.separator"] = string(os.PathSeparator)
	out["line.separator"] = "\n"
	out["path.separator"] = string(os.PathListSeparator)
	out["go.maxprocs"] = strconv.Itoa(runtime.GOMAXPROCS(0))
	out["zookeeper.admin.enableServer"] = strconv.FormatBool(s.cfg.Admin.Enabled)
	out["zookeeper.admin.serverPort"] = strconv.Itoa(s.cfg.Admin.Port)
	out["zookeeper.extendedTypesEnabled"] = strconv.FormatBool(s.cfg.ExtendedTypes)
}

// adminVotingView is VotingViewCommand: the voters of the ensemble
// (observers are not in ZooKeeper's voting view), as Jackson writes its
// QuorumServerView (snake_case).
func (s *Server) adminVotingView(_ map[string]string, out map[string]any) {
	view := map[string]any{}
	for _, sv := range s.cfg.Servers {
		if sv.Observer {
			continue
		}
		client := ""
		if sv.ClientPort > 0 {
			host := sv.ClientHost
			if host == "" {
				host = "0.0.0.0"
			}
			client = net.JoinHostPort(host, strconv.Itoa(sv.ClientPort))
		}
		view[strconv.FormatUint(sv.ID, 10)] = map[string]any{
			"server_addresses":   []string{net.JoinHostPort(sv.Host, strconv.Itoa(sv.PeerPort))},
			"election_addresses": []string{net.JoinHostPort(sv.Host, strconv.Itoa(sv.ElectPort))},
			"client_address":     client,
			"learner_type":       "participant",
		}
	}
	out["current_config"] = view
}

// adminZabState is ZabStateCommand. A zkafka member serving a leader is
// in zab's "broadcast" phase; without one it is "election". Its zxids are
// zkafka's (no epoch in the top 32 bits while the first leader leads).
func (s *Server) adminZabState(_ map[string]string, out map[string]any) {
	if s.ens == nil {
		out["voting"], out["zabstate"] = false, ""
		return
	}
	self := s.cfg.selfSpec()
	zxid := s.tree.Load().LastZxid()
	out["myid"] = s.cfg.MyID
	out["is_leader"] = s.isLeader()
	out["voting"] = self != nil && !self.Observer
	if self != nil {
		out["quorum_address"] = multipleAddresses(self.Host, self.PeerPort)
		out["election_address"] = multipleAddresses(self.Host, self.ElectPort)
	}
	out["client_address"] = s.clientAddr.String()
	out["last_zxid"] = "0x" + strconv.FormatInt(zxid, 16)
	out["zab_epoch"] = zxid >> 32
	out["zab_counter"] = zxid & 0xffffffff
	out["zabstate"] = "election"
	if s.serving() {
		out["zabstate"] = "broadcast"
	}
}

// resetConnectionStats is crst.
func (s *Server) resetConnectionStats() {
	for _, c := range s.connections() {
		c.received.Store(0)
		c.sent.Store(0)
		c.cstats.reset()
	}
}

// multipleAddresses is a server.N address as Jackson writes ZooKeeper's
// MultipleAddresses (its getters, snake_case); zkafka has one address per
// server.N line.
func multipleAddresses(host string, port int) map[string]any {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	return map[string]any{
		"all_addresses": []string{addr}, "all_host_strings": []string{host}, "all_ports": []int{port},
		"all_reachable_addresses": []string{addr}, "all_reachable_addresses_or_all": []string{addr},
		"empty": false, "one": addr, "reachable_address": addr, "reachable_or_one": addr,
		"wildcard_addresses": []string{net.JoinHostPort("0.0.0.0", strconv.Itoa(port))},
	}
}
