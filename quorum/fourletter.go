package quorum

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/zkafka/zkafka/quorum/raftnode"
)

// zkVersion is what the four-letter words report as the server version;
// monitoring scripts parse the leading ZooKeeper version.
const zkVersion = "3.8.0-zkafka, built on 1970-01-01 00:00 UTC"

// fourLetterWords are the commands the client port understands in place of
// a length prefix. Only those in 4lw.commands.whitelist run.
var fourLetterWords = []string{"ruok", "srvr", "stat", "mntr", "conf", "cons", "envi", "dirs",
	"wchs", "wchc", "wchp", "dump", "isro", "srst", "crst"}

func isFourLetterWord(w string) bool {
	for _, x := range fourLetterWords {
		if x == w {
			return true
		}
	}
	return false
}

// serveFourLetterWord writes the answer to a four-letter word and returns;
// the caller closes the connection.
func (s *Server) serveFourLetterWord(w net.Conn, word string) {
	w.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if !s.cfg.FourLetterWords[word] {
		fmt.Fprintf(w, "%s is not executed because it is not in the whitelist.\n", word)
		return
	}
	if !s.serving() {
		switch word {
		case "ruok", "isro", "conf", "envi", "srst", "crst", "dirs":
		default:
			io.WriteString(w, notServing)
			return
		}
	}
	switch word {
	case "ruok":
		io.WriteString(w, "imok")
	case "srvr":
		s.writeServerStats(w, false)
	case "stat":
		s.writeServerStats(w, true)
	case "mntr":
		s.writeMonitor(w)
	case "conf":
		s.writeConf(w)
	case "cons":
		s.writeConnections(w)
		io.WriteString(w, "\n")
	case "envi":
		s.writeEnvironment(w)
	case "dirs":
		fmt.Fprintf(w, "datadir_size: %d\nlogdir_size: %d\n", dirSize(s.cfg.DataDir), dirSize(s.cfg.DataLogDir))
	case "wchs":
		c := s.watches.counts()
		fmt.Fprintf(w, "%d connections watching %d paths\nTotal watches:%d\n", c.connections, c.paths, c.watches)
	case "wchc":
		s.writeWatchesBySession(w)
	case "wchp":
		s.writeWatchesByPath(w)
	case "dump":
		s.writeDump(w)
	case "isro":
		if s.serving() {
			io.WriteString(w, "rw")
		} else {
			io.WriteString(w, "ro")
		}
	case "srst":
		s.stats.reset()
		io.WriteString(w, "Server stats reset.\n")
	case "crst":
		for _, c := range s.connections() {
			c.received.Store(0)
			c.sent.Store(0)
		}
		io.WriteString(w, "Connection stats reset.\n")
	}
}

// mode is the server's role as srvr and mntr report it.
func (s *Server) mode() string {
	if s.ens == nil {
		return "standalone"
	}
	switch raftnode.Role(s.ens.role.Load()) {
	case raftnode.RoleLeader:
		return "leader"
	case raftnode.RoleLearner:
		return "observer"
	}
	return "follower"
}

// notServing is Apache ZooKeeper's answer to most four-letter words while
// the server is not part of a quorum.
const notServing = "This ZooKeeper instance is not currently serving requests\n"

func (s *Server) writeServerStats(w io.Writer, withClients bool) {
	fmt.Fprintf(w, "Zookeeper version: %s\n", zkVersion)
	if withClients {
		io.WriteString(w, "Clients:\n")
		s.writeConnections(w)
		io.WriteString(w, "\n")
	}
	minMs, avgMs, maxMs := s.stats.latency()
	tree := s.tree.Load()
	fmt.Fprintf(w, "Latency min/avg/max: %d/%.4f/%d\n", minMs, avgMs, maxMs)
	fmt.Fprintf(w, "Received: %d\nSent: %d\nConnections: %d\nOutstanding: %d\n",
		s.stats.received.Load(), s.stats.sent.Load(), len(s.connections()), s.outstanding())
	fmt.Fprintf(w, "Zxid: 0x%x\nMode: %s\nNode count: %d\n", tree.LastZxid(), s.mode(), tree.NodeCount())
}

func (s *Server) outstanding() int {
	n := 0
	for _, c := range s.connections() {
		n += len(c.calls)
	}
	return n
}

func (s *Server) writeConnections(w io.Writer) {
	conns := s.connections()
	sort.Slice(conns, func(i, j int) bool { return conns[i].started.Before(conns[j].started) })
	for _, c := range conns {
		fmt.Fprintf(w, " %s[1](queued=%d,recved=%d,sent=%d,sid=0x%x,est=%d,to=%d)\n",
			c.nc.RemoteAddr(), len(c.calls), c.received.Load(), c.sent.Load(), c.session(),
			c.started.UnixMilli(), c.sessionTimeout.Milliseconds())
	}
}

func (s *Server) writeMonitor(w io.Writer) {
	tree := s.tree.Load()
	minMs, avgMs, maxMs := s.stats.latency()
	wc := s.watches.counts()
	ephemerals := 0
	for id := range tree.Sessions() {
		ephemerals += len(tree.Ephemerals(id, "/"))
	}
	lines := [][2]any{
		{"zk_version", zkVersion},
		{"zk_server_state", s.mode()},
		{"zk_avg_latency", fmt.Sprintf("%.4f", avgMs)},
		{"zk_max_latency", maxMs},
		{"zk_min_latency", minMs},
		{"zk_packets_received", s.stats.received.Load()},
		{"zk_packets_sent", s.stats.sent.Load()},
		{"zk_num_alive_connections", len(s.connections())},
		{"zk_outstanding_requests", s.outstanding()},
		{"zk_znode_count", tree.NodeCount()},
		{"zk_watch_count", wc.watches},
		{"zk_ephemerals_count", ephemerals},
		{"zk_global_sessions", len(tree.Sessions())},
		{"zk_open_file_descriptor_count", openFiles()},
		{"zk_max_file_descriptor_count", maxFiles()},
	}
	if s.ens != nil && s.isLeader() {
		fs := s.followerStatus()
		lines = append(lines, [][2]any{
			{"zk_learners", fs.learners},
			{"zk_followers", fs.followers},
			{"zk_synced_followers", fs.syncedFollowers},
			{"zk_synced_non_voting_followers", 0},
			{"zk_synced_observers", fs.syncedObservers},
			{"zk_pending_syncs", 0},
		}...)
	}
	for _, l := range lines {
		fmt.Fprintf(w, "%s\t%v\n", l[0], l[1])
	}
}

func (s *Server) writeConf(w io.Writer) {
	c := s.cfg
	fmt.Fprintf(w, "clientPort=%d\nsecureClientPort=-1\ndataDir=%s\ndataDirSize=%d\ndataLogDir=%s\ndataLogSize=%d\n",
		c.ClientPort, c.DataDir, dirSize(c.DataDir), c.DataLogDir, dirSize(c.DataLogDir))
	fmt.Fprintf(w, "tickTime=%d\nmaxClientCnxns=%d\nminSessionTimeout=%d\nmaxSessionTimeout=%d\nclientPortListenBacklog=-1\nserverId=%d\n",
		c.TickTime.Milliseconds(), c.MaxClientCnxns, c.MinSessionTimeout.Milliseconds(), c.MaxSessionTimeout.Milliseconds(), c.MyID)
	if len(c.Servers) > 0 {
		fmt.Fprintf(w, "initLimit=%d\nsyncLimit=%d\n", c.InitLimit, c.SyncLimit)
		for _, sv := range c.Servers {
			role := "participant"
			if sv.Observer {
				role = "observer"
			}
			fmt.Fprintf(w, "server.%d=%s:%d:%d:%s;%s:%d\n", sv.ID, sv.Host, sv.PeerPort, sv.ElectPort, role, sv.ClientHost, sv.ClientPort)
		}
	}
}

func (s *Server) writeEnvironment(w io.Writer) {
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	io.WriteString(w, "Environment:\n")
	for _, kv := range [][2]string{
		{"zookeeper.version", zkVersion},
		{"host.name", host},
		{"go.version", runtime.Version()},
		{"os.name", runtime.GOOS},
		{"os.arch", runtime.GOARCH},
		{"user.dir", wd},
	} {
		fmt.Fprintf(w, "%s=%s\n", kv[0], kv[1])
	}
}

func (s *Server) writeWatchesBySession(w io.Writer) {
	m := s.watches.bySession()
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		fmt.Fprintf(w, "0x%x\n", id)
		for _, p := range m[id] {
			fmt.Fprintf(w, "\t%s\n", p)
		}
	}
	io.WriteString(w, "\n")
}

func (s *Server) writeWatchesByPath(w io.Writer) {
	m := s.watches.byPath()
	paths := make([]string, 0, len(m))
	for p := range m {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(w, "%s\n", p)
		for _, id := range m[p] {
			fmt.Fprintf(w, "\t0x%x\n", id)
		}
	}
	io.WriteString(w, "\n")
}

func (s *Server) writeDump(w io.Writer) {
	tree := s.tree.Load()
	sessions := tree.Sessions()
	ids := make([]int64, 0, len(sessions))
	for id := range sessions {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	fmt.Fprintf(w, "SessionTracker dump:\nGlobal Sessions(%d):\n", len(ids))
	for _, id := range ids {
		fmt.Fprintf(w, "0x%x\t%dms\n", id, sessions[id])
	}
	withEphemerals := 0
	var b strings.Builder
	for _, id := range ids {
		eph := tree.Ephemerals(id, "/")
		if len(eph) == 0 {
			continue
		}
		withEphemerals++
		fmt.Fprintf(&b, "0x%x:\n", id)
		for _, p := range eph {
			fmt.Fprintf(&b, "\t%s\n", p)
		}
	}
	fmt.Fprintf(w, "ephemeral nodes dump:\nSessions with Ephemerals (%d):\n%s", withEphemerals, b.String())
}

// dirSize sums the sizes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

func openFiles() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}
