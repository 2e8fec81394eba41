package quorum

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// mntrKeys are the keys of Apache ZooKeeper 3.8's mntr on a standalone
// server, without the zk_ prefix, in its order (a hash order: monitoring
// tools look keys up by name). Most are counters and gauges of its request
// pipeline (commit processor, sync processor, JVM); zkafka reports those it
// has (mntrValues) and 0 for the others, so that a tool that expects a key
// finds it.
var mntrKeys = []string{
	"version", "server_state", "ephemerals_count", "num_alive_connections", "avg_latency",
	"outstanding_requests", "znode_count", "global_sessions", "non_mtls_remote_conn_count",
	"last_client_response_size", "packets_sent", "packets_received", "max_client_response_size",
	"connection_drop_probability", "watch_count", "auth_failed_count", "min_latency",
	"max_file_descriptor_count", "approximate_data_size", "open_file_descriptor_count", "local_sessions",
	"uptime", "max_latency", "outstanding_tls_handshake", "min_client_response_size",
	"non_mtls_local_conn_count", "proposal_count", "watch_bytes", "outstanding_changes_removed",
	"throttled_ops", "stale_requests_dropped", "large_requests_rejected", "insecure_admin_count",
	"connection_rejected", "cnxn_closed_without_zk_server_running", "sessionless_connections_expired",
	"looking_count", "dead_watchers_queued", "stale_requests", "connection_drop_count",
	"learner_proposal_received_count", "digest_mismatches_count", "dead_watchers_cleared",
	"response_packet_cache_hits", "bytes_received_count", "add_dead_watcher_stall_time",
	"request_throttle_wait_count", "requests_not_forwarded_to_commit_processor", "response_packet_cache_misses",
	"ensemble_auth_success", "prep_processor_request_queued", "learner_commit_received_count", "stale_replies",
	"connection_request_count", "response_bytes", "ensemble_auth_fail", "diff_count",
	"response_packet_get_children_cache_misses", "connection_revalidate_count",
	"quit_leading_due_to_disloyal_voter", "snap_count", "unrecoverable_error_count", "unsuccessful_handshake",
	"commit_count", "stale_sessions_expired", "response_packet_get_children_cache_hits",
	"sync_processor_request_queued", "outstanding_changes_queued", "request_commit_queued",
	"ensemble_auth_skip", "skip_learner_request_to_next_processor_count", "tls_handshake_exceeded",
	"revalidate_count",
}

// mntrSummaries are ZooKeeper's AvgMinMaxCounter metrics: each is five keys,
// zk_avg_X, zk_min_X, zk_max_X, zk_cnt_X and zk_sum_X.
var mntrSummaries = []string{
	"socket_closing_time", "proposal_process_time", "leader_unavailable_time", "node_created_watch_count",
	"session_queues_drained", "write_commit_proc_req_queued", "connection_token_deficit",
	"read_commit_proc_req_queued", "node_deleted_watch_count", "startup_txns_load_time",
	"sync_processor_queue_size", "follower_sync_time", "prep_processor_queue_size", "fsynctime",
	"inflight_snap_count", "reads_issued_from_session_queue", "learner_request_processor_queue_size",
	"snapshottime", "unavailable_time", "startup_txns_loaded", "reads_after_write_in_session_queue",
	"requests_in_session_queue", "write_commit_proc_issued", "prep_process_time", "pending_session_queue_size",
	"time_waiting_empty_pool_in_commit_processor_read_ms", "commit_process_time", "dbinittime",
	"inflight_diff_count", "netty_queued_buffer_capacity", "election_time", "commit_commit_proc_req_queued",
	"sync_processor_batch_size", "node_children_watch_count", "write_batch_time_in_commit_processor",
	"read_commit_proc_issued", "concurrent_request_processing_in_commit_processor", "observer_sync_time",
	"node_changed_watch_count", "sync_process_time", "startup_snap_load_time",
}

// mntrPercentileSummaries add zk_p50_X, zk_p95_X, zk_p99_X and zk_p999_X
// (AvgMinMaxPercentileCounter).
var mntrPercentileSummaries = []string{
	"prep_processor_queue_time_ms", "jvm_pause_time_ms", "close_session_prep_time", "read_commitproc_time_ms",
	"updatelatency", "local_write_committed_time_ms", "request_throttle_queue_time_ms", "readlatency",
	"quorum_ack_latency", "om_commit_process_time_ms", "read_final_proc_time_ms", "commit_propagation_latency",
	"dead_watchers_cleaner_latency", "write_final_proc_time_ms", "proposal_ack_creation_latency",
	"proposal_latency", "om_proposal_process_time_ms", "sync_processor_queue_and_flush_time_ms",
	"propagation_latency", "server_write_committed_time_ms", "sync_processor_queue_time_ms",
	"sync_processor_queue_flush_time_ms", "write_commitproc_time_ms",
}

// mntrValues are the values zkafka knows, by key.
func (s *Server) mntrValues() map[string]string {
	tree := s.tree.Load()
	minMs, avgMs, maxMs := s.stats.latency()
	ephemerals := 0
	for id := range tree.Sessions() {
		ephemerals += len(tree.Ephemerals(id, "/"))
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	return map[string]string{
		"version":                     zkVersion,
		"server_state":                s.mode(),
		"ephemerals_count":            itoa(int64(ephemerals)),
		"num_alive_connections":       itoa(int64(len(s.connections()))),
		"avg_latency":                 javaDouble(avgMs),
		"min_latency":                 itoa(minMs),
		"max_latency":                 itoa(maxMs),
		"outstanding_requests":        itoa(int64(s.outstanding())),
		"znode_count":                 itoa(int64(znodeCount(tree))),
		"global_sessions":             itoa(int64(len(tree.Sessions()))),
		"packets_sent":                itoa(s.stats.sent.Load()),
		"packets_received":            itoa(s.stats.received.Load()),
		"connection_drop_probability": "0.0",
		"watch_count":                 itoa(int64(s.watches.counts().all)),
		"max_file_descriptor_count":   itoa(int64(maxFiles())),
		"open_file_descriptor_count":  itoa(int64(openFiles())),
		// Walked on a copy-on-write clone: the walk is O(znodes) and
		// must not hold up writes (ZooKeeper keeps a running total).
		"approximate_data_size": itoa(tree.Clone().DataSize()),
		"uptime":                itoa(time.Since(s.started).Milliseconds()),
	}
}

// writeMonitor is mntr: "key\tvalue" lines.
func (s *Server) writeMonitor(w io.Writer) {
	vals := s.mntrValues()
	line := func(k, v string) { fmt.Fprintf(w, "%s\t%s\n", k, v) }
	for _, k := range mntrKeys {
		v, ok := vals[k]
		if !ok {
			v = "0"
		}
		line("zk_"+k, v)
		if k == "server_state" {
			for _, l := range s.ensembleMonitorLines() {
				line(l[0], l[1])
			}
		}
	}
	for _, name := range mntrSummaries {
		for _, l := range summaryLines(name, summary{}, nil, false) {
			line(l[0], l[1])
		}
	}
	measured := s.stats.measuredLatencies()
	for _, name := range mntrPercentileSummaries {
		sum, hist := measured.of(name)
		for _, l := range summaryLines(name, sum, hist, true) {
			line(l[0], l[1])
		}
	}
	for _, l := range s.stats.namespaceLines() {
		line(l[0], l[1])
	}
}

// ensembleMonitorLines are the keys an ensemble member adds: its peer
// state and the quorum size (QuorumPeer), and on the leader the learners,
// the proposal sizes and one pair of summaries per learner (the queue of
// its LearnerHandler: zkafka's raft transport has none, so they are 0).
func (s *Server) ensembleMonitorLines() [][2]string {
	if s.ens == nil {
		return nil
	}
	voters := 0
	for _, sv := range s.currentMembers().servers { // after any reconfig
		if !sv.Observer {
			voters++
		}
	}
	itoa := strconv.Itoa
	peerState := map[string]string{"leader": "leading", "follower": "following", "observer": "observing"}[s.mode()]
	out := [][2]string{{"zk_peer_state", peerState + " - broadcast"}, {"zk_quorum_size", itoa(voters)}}
	if s.mode() == "observer" {
		// The server it learns from (Observer.getLearnerMasterId): ours
		// is the raft leader.
		out = append(out, [2]string{"zk_observer_master_id", strconv.FormatUint(s.ens.leader.Load(), 10)})
	}
	if !s.isLeader() {
		return out
	}
	fs := s.followerStatus()
	last, minSize, maxSize := s.stats.proposalSizes().values()
	out = append(out, [][2]string{
		{"zk_learners", itoa(fs.learners)},
		{"zk_synced_followers", itoa(fs.syncedFollowers)},
		{"zk_synced_non_voting_followers", "0"},
		{"zk_synced_observers", itoa(fs.syncedObservers)},
		{"zk_pending_syncs", "0"},
		{"zk_leader_uptime", itoa(int(time.Since(s.started).Milliseconds()))},
		{"zk_last_proposal_size", itoa(last)},
		{"zk_max_proposal_size", itoa(maxSize)},
		{"zk_min_proposal_size", itoa(minSize)},
	}...)
	for _, id := range fs.learnerIDs {
		sid := strconv.FormatUint(id, 10)
		out = append(out, summaryLines(sid+"_learner_handler_qp_size", summary{}, nil, false)...)
		out = append(out, summaryLines(sid+"_learner_handler_qp_time_ms", summary{}, nil, true)...)
	}
	return out
}

func openFiles() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}
