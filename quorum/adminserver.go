package quorum

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// The AdminServer: Apache ZooKeeper 3.8's JettyAdminServer, GET
// {admin.commandURL}/{command} answers a JSON object. Every answer has
// "command" (the primary name) and "error" (null, or why it failed);
// the other keys are those of Commands.java's command classes, so scripts
// written against ZooKeeper's JSON work. The commands are the four-letter
// words' data (one home: fourletter.go, mntr.go, dump.go, stats.go).

// adminCommand is one command of Commands.java.
type adminCommand struct {
	names []string // the primary name first, then the aliases
	// serverRequired: the command answers "not currently serving" while
	// the server is not (CommandBase.isServerRequired).
	serverRequired bool
	run            func(s *Server, args map[string]string, out map[string]any)
}

// adminCommands are Commands.java's, in its registration order.
var adminCommands = []adminCommand{
	{[]string{"connection_stat_reset", "crst"}, true, func(s *Server, _ map[string]string, _ map[string]any) { s.resetConnectionStats() }},
	{[]string{"configuration", "conf", "config"}, true, (*Server).adminConf},
	{[]string{"connections", "cons"}, true, func(s *Server, _ map[string]string, out map[string]any) {
		out["connections"], out["secure_connections"] = s.adminConnections(false), []any{}
	}},
	{[]string{"hash"}, true, func(_ *Server, _ map[string]string, out map[string]any) { out["digests"] = []any{} }},
	{[]string{"dirs"}, true, func(s *Server, _ map[string]string, out map[string]any) {
		out["datadir_size"], out["logdir_size"] = dirSize(s.cfg.DataDir), dirSize(s.cfg.DataLogDir)
	}},
	{[]string{"dump"}, true, (*Server).adminDump},
	{[]string{"environment", "env", "envi"}, false, func(_ *Server, _ map[string]string, out map[string]any) {
		for _, kv := range environment() {
			out[kv[0]] = kv[1]
		}
	}},
	{[]string{"get_trace_mask", "gtmk"}, false, func(_ *Server, _ map[string]string, out map[string]any) { out["tracemask"] = defaultTraceMask }},
	{[]string{"initial_configuration", "icfg"}, true, func(s *Server, _ map[string]string, out map[string]any) {
		out["initial_configuration"] = s.cfg.initialText
	}},
	{[]string{"is_read_only", "isro"}, true, func(s *Server, _ map[string]string, out map[string]any) { out["read_only"] = !s.serving() }},
	{[]string{"last_snapshot", "lsnp"}, true, func(_ *Server, _ map[string]string, out map[string]any) {
		// ZooKeeper's answer when it has taken no snapshot: zkafka's
		// snapshots are raft's, not ZooKeeper's snapshot.ZXID files.
		out["zxid"], out["timestamp"] = "ffffffffffffffff", -1
	}},
	{[]string{"leader", "lead"}, true, (*Server).adminLeader},
	{[]string{"monitor", "mntr"}, false, (*Server).adminMonitor},
	{[]string{"observer_connection_stat_reset", "orst"}, true, func(*Server, map[string]string, map[string]any) {}},
	{[]string{"ruok"}, true, func(*Server, map[string]string, map[string]any) {}},
	{[]string{"set_trace_mask", "stmk"}, false, adminSetTraceMask},
	{[]string{"server_stats", "srvr"}, true, func(s *Server, _ map[string]string, out map[string]any) { s.adminServerStats(out) }},
	{[]string{"stats", "stat"}, true, func(s *Server, _ map[string]string, out map[string]any) {
		s.adminServerStats(out)
		out["connections"], out["secure_connections"] = s.adminConnections(true), []any{}
	}},
	{[]string{"stat_reset", "srst"}, true, func(s *Server, _ map[string]string, _ map[string]any) { s.stats.reset() }},
	{[]string{"observers", "obsr"}, true, func(s *Server, _ map[string]string, out map[string]any) {
		// zkafka's observers are raft learners with no ObserverMaster
		// connection info to list.
		out["synced_observers"], out["observers"] = s.followerStatus().syncedObservers, []any{}
	}},
	{[]string{"system_properties", "sysp"}, false, (*Server).adminSystemProperties},
	{[]string{"voting_view"}, true, (*Server).adminVotingView},
	{[]string{"watches", "wchc"}, true, func(s *Server, _ map[string]string, out map[string]any) {
		m := map[string][]string{}
		for id, paths := range s.watches.bySession() {
			m[strconv.FormatInt(id, 10)] = paths
		}
		out["session_id_to_watched_paths"] = m
	}},
	{[]string{"watches_by_path", "wchp"}, true, func(s *Server, _ map[string]string, out map[string]any) {
		out["path_to_session_ids"] = s.watches.byPath()
	}},
	{[]string{"watch_summary", "wchs"}, true, func(s *Server, _ map[string]string, out map[string]any) {
		c := s.watches.counts()
		out["num_connections"], out["num_paths"], out["num_total_watches"] = c.connections, c.paths, c.watches
	}},
	{[]string{"zabstate"}, false, (*Server).adminZabState},
}

// defaultTraceMask is ZooTrace's default text trace level (gtmk).
const defaultTraceMask = 306

// adminCommandByName finds a command by any of its names.
func adminCommandByName(name string) *adminCommand {
	for i := range adminCommands {
		for _, n := range adminCommands[i].names {
			if n == name {
				return &adminCommands[i]
			}
		}
	}
	return nil
}

// runAdminCommand is Commands.runCommand: the answer of command name.
func (s *Server) runAdminCommand(name string, args map[string]string) map[string]any {
	out := map[string]any{"command": name, "error": nil}
	cmd := adminCommandByName(name)
	switch {
	case cmd == nil:
		out["error"] = "Unknown command: " + name
	case cmd.serverRequired && !s.adminRunning():
		out["error"] = strings.TrimSuffix(notServing, "\n")
	default:
		out["command"] = cmd.names[0]
		cmd.run(s, args, out)
	}
	return out
}

// adminRunning is ZooKeeperServer.isRunning: serving, and not shutting down.
func (s *Server) adminRunning() bool {
	s.mu.Lock()
	closed := s.mu.closed
	s.mu.Unlock()
	return !closed && s.serving()
}

// adminHandler serves commandURL: the list of commands as links, or one
// command's JSON (HTTP 200 either way, as JettyAdminServer).
func (s *Server) adminHandler(commandURL string) http.Handler {
	base := strings.TrimSuffix(commandURL, "/")
	mux := http.NewServeMux()
	mux.HandleFunc(base+"/", func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, base+"/")
		if name == "" {
			s.writeCommandLinks(w, base)
			return
		}
		args := map[string]string{}
		for k, v := range r.URL.Query() {
			args[k] = v[0]
		}
		body, err := json.MarshalIndent(s.runAdminCommand(name, args), "", "  ")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(body, '\n'))
	})
	if base != "" {
		mux.HandleFunc(base, func(w http.ResponseWriter, _ *http.Request) { s.writeCommandLinks(w, base) })
	}
	return mux
}

func (s *Server) writeCommandLinks(w http.ResponseWriter, base string) {
	names := make([]string, 0, len(adminCommands))
	for _, c := range adminCommands {
		names = append(names, c.names[0])
	}
	sort.Strings(names)
	w.Header().Set("Content-Type", "text/html")
	for _, n := range names {
		fmt.Fprintf(w, "<a href=\"%s/%s\">%s</a>\n<br/>\n", base, n, n)
	}
}
