package quorum

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/znode"
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

// serveFourLetterWord writes the answer to a four-letter word on c's
// connection and returns; the caller closes the connection.
func (s *Server) serveFourLetterWord(c *conn, word string) {
	w := c.nc
	// ZooKeeper counts the word as a packet received (checkFourLetterWord).
	c.received.Add(1)
	s.stats.received.Add(1)
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
	// One write: a client reading up to the close sees the whole answer.
	var b bytes.Buffer
	s.writeFourLetterWord(&b, c, word)
	w.Write(b.Bytes())
	// As NIOServerCnxn.close: out of the connection list before the socket
	// closes, so the next word's cons and mntr no longer count this one.
	s.removeConn(c)
}

func (s *Server) writeFourLetterWord(w *bytes.Buffer, self *conn, word string) {
	switch word {
	case "ruok":
		w.WriteString("imok")
	case "srvr":
		s.writeServerStats(w, nil)
	case "stat":
		s.writeServerStats(w, self)
	case "mntr":
		s.writeMonitor(w)
	case "conf":
		s.writeConf(w)
	case "cons":
		s.writeConnections(w, self, false)
		w.WriteString("\n")
	case "envi":
		writeEnvironment(w)
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
			w.WriteString("rw")
		} else {
			w.WriteString("ro")
		}
	case "srst":
		s.stats.reset()
		w.WriteString("Server stats reset.\n")
	case "crst":
		s.resetConnectionStats()
		w.WriteString("Connection stats reset.\n")
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

// writeServerStats is srvr, and stat when self (the connection asking) is
// set: stat lists the connections, in brief.
func (s *Server) writeServerStats(w io.Writer, self *conn) {
	fmt.Fprintf(w, "Zookeeper version: %s\n", zkVersion)
	if self != nil {
		io.WriteString(w, "Clients:\n")
		s.writeConnections(w, self, true)
		io.WriteString(w, "\n")
	}
	minMs, avgMs, maxMs := s.stats.latency()
	tree := s.tree.Load()
	fmt.Fprintf(w, "Latency min/avg/max: %d/%s/%d\n", minMs, javaDouble(avgMs), maxMs)
	fmt.Fprintf(w, "Received: %d\nSent: %d\nConnections: %d\nOutstanding: %d\n",
		s.stats.received.Load(), s.stats.sent.Load(), len(s.connections()), s.outstanding())
	fmt.Fprintf(w, "Zxid: 0x%x\nMode: %s\nNode count: %d\n", tree.LastZxid(), s.mode(), znodeCount(tree))
	if s.ens != nil && s.isLeader() {
		fmt.Fprintf(w, "Proposal sizes last/min/max: %s\n", s.stats.proposalSizes())
	}
}

// znodeCount is ZooKeeper's node count: its tree holds the root twice
// (as "" and "/").
func znodeCount(t *znode.Tree) int { return t.NodeCount() + 1 }

func (s *Server) outstanding() int {
	n := 0
	for _, c := range s.connections() {
		n += len(c.calls)
	}
	return n
}

// writeConnections lists the connections as ServerCnxn.dumpConnectionInfo:
// self is the connection asking (not reading: interest ops 0); brief leaves
// out the session details, as stat does.
func (s *Server) writeConnections(w io.Writer, self *conn, brief bool) {
	conns := s.connections()
	sort.Slice(conns, func(i, j int) bool { return conns[i].started.Before(conns[j].started) })
	for _, c := range conns {
		interest := 1
		if c == self {
			interest = 0
		}
		fmt.Fprintf(w, " %s[%d](queued=%d,recved=%d,sent=%d", javaAddr(c.nc.RemoteAddr()), interest,
			len(c.calls), c.received.Load(), c.sent.Load())
		if id := c.sessionID(); id != 0 && !brief {
			st := c.cstats.snapshot()
			fmt.Fprintf(w, ",sid=0x%x,lop=%s,est=%d,to=%d", id, st.lastOp, c.started.UnixMilli(), c.sessionTimeout.Milliseconds())
			if st.lastCxid >= 0 {
				fmt.Fprintf(w, ",lcxid=0x%x", st.lastCxid)
			}
			fmt.Fprintf(w, ",lzxid=0x%x,lresp=%d,llat=%d,minlat=%d,avglat=%d,maxlat=%d",
				uint64(st.lastZxid), st.lastRespMs, st.last, st.latency.min, st.avgLatency, st.latency.max)
		}
		io.WriteString(w, ")\n")
	}
}

// writeConf is conf, as ZooKeeperServer.dumpConf (and, in an ensemble,
// QuorumPeer's additions). The directories are zkafka's own: Apache
// ZooKeeper shows its version-2 subdirectories.
func (s *Server) writeConf(w io.Writer) {
	c := s.cfg
	fmt.Fprintf(w, "clientPort=%d\nsecureClientPort=-1\ndataDir=%s\ndataDirSize=%d\ndataLogDir=%s\ndataLogSize=%d\n",
		c.ClientPort, c.DataDir, dirSize(c.DataDir), c.DataLogDir, dirSize(c.DataLogDir))
	fmt.Fprintf(w, "tickTime=%d\nmaxClientCnxns=%d\nminSessionTimeout=%d\nmaxSessionTimeout=%d\nclientPortListenBacklog=-1\nserverId=%d\n",
		c.TickTime.Milliseconds(), c.MaxClientCnxns, c.MinSessionTimeout.Milliseconds(), c.MaxSessionTimeout.Milliseconds(), c.MyID)
	if len(c.Servers) == 0 {
		return
	}
	// QuorumPeerConfig's additions; the membership is QuorumVerifier's
	// toString, whose last line has no newline.
	fmt.Fprintf(w, "initLimit=%d\nsyncLimit=%d\nelectionAlg=3\n", c.InitLimit, c.SyncLimit)
	peerType := 0 // LearnerType.PARTICIPANT
	for _, sv := range c.Servers {
		if sv.ID == c.MyID {
			fmt.Fprintf(w, "electionPort=%d\nquorumPort=%d\n", sv.ElectPort, sv.PeerPort)
			if sv.Observer {
				peerType = 1
			}
		}
	}
	fmt.Fprintf(w, "peerType=%d\nmembership: \n%s", peerType, c.DynamicConfigText())
}

// javaAddr renders an address as Java's InetSocketAddress.toString does for
// a connected socket: "/127.0.0.1:2181".
func javaAddr(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "/" + a.String()
	}
	return "/" + host + ":" + port
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
