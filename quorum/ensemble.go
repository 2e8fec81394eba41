package quorum

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/segment"
)

// An ensemble member (zoo.cfg with server.N lines) is one raft node among
// the servers listed: participants are voters, observers are learners. It
// differs from a standalone server in four ways:
//
//   - Serving: a server serves clients only while it knows a leader (it is
//     in touch with a majority of voters). When it loses the leader for
//     longer than servingGrace, it closes its client connections (clients
//     see connection loss and move on) and refuses new ones, except clients
//     that asked for read-only mode, which get a read-only session (writes
//     answer NotReadOnly). When a leader is back, read-only connections are
//     closed so that their clients come back read-write.
//   - Sessions: only the leader expires sessions. Every server forwards its
//     clients' activity (batched every tickTime/2) to the leader over the
//     peer connection; a new leader gives every session a fresh lease of its
//     timeout (sessionTracker.lease).
//   - Elections: raft's (PreVote, CheckQuorum), at once when the leader's
//     process is gone (raftnode's PeerGone), then the new leader hands
//     over once to a higher-myid voter that took part and is fully caught
//     up (raftnode's HandOver).
//   - Time: raft ticks every tickTime/40, an election timeout is 10 ticks
//     (half a tickTime, randomized up to a whole one), so that a dead
//     leader is replaced within about a tickTime. initLimit and syncLimit
//     are accepted and reported but do not drive raft's timers.
type ensemble struct {
	node      *raftnode.Node
	transport *peerTransport
	tick      time.Duration

	leader atomic.Uint64
	role   atomic.Uint32 // a raftnode.Role
	kick   chan struct{} // the leader or role changed; buffered 1

	mu struct {
		sync.Mutex
		touches map[int64]time.Duration // activity not yet forwarded to the leader
	}
	// led is what waitLeader waits on (ensemble_wait.go).
	led leaderWait
}

// servingGrace is how long a server keeps its clients while it knows no
// leader: an election that raft runs itself (a stopped or cut-off leader)
// leaves a follower without one from its own election timeout until the
// new leader's first message, up to another randomized election timeout
// (10 to 20 ticks) when the first pre-vote met a voter still in the old
// leader's lease, then a hand-over's round trip. Closing the clients
// sooner sends them away from a server that is about to serve again, to
// the next one go-zookeeper offers, which may be the stopped leader (its
// kernel accepts; go-zookeeper then waits ten receive timeouts for an
// answer, past the session's lease on the new leader). A server cut off
// from a majority lets its clients go within about a tickTime: raft's
// election timeout (10 to 20 ticks of tickTime/40) to notice, then the grace.
const servingGraceTicks = 24

// ensembleTick is raft's tick in an ensemble.
func ensembleTick(tickTime time.Duration) time.Duration {
	return max(tickTime/40, 5*time.Millisecond)
}

// selfSpec returns this server's server.N line.
func (c *Config) selfSpec() *ServerSpec {
	for i := range c.Servers {
		if c.Servers[i].ID == c.MyID {
			return &c.Servers[i]
		}
	}
	return nil
}

// startEnsemble starts the raft node of an ensemble member and its peer
// transport. fs is the raft log's file system (nil: the operating
// system's).
func startEnsemble(s *Server, dir string, fs segment.FS) (*raftReplicator, error) {
	self := s.cfg.selfSpec()
	if self == nil {
		return nil, fmt.Errorf("myid %d is not among the server.N lines", s.cfg.MyID)
	}
	peers := make([]raftnode.Peer, 0, len(s.cfg.Servers))
	addrs := map[uint64]string{}
	for _, sp := range s.cfg.Servers {
		peers = append(peers, raftnode.Peer{ID: sp.ID, Learner: sp.Observer})
		addrs[sp.ID] = net.JoinHostPort(sp.Host, strconv.Itoa(sp.PeerPort))
	}
	l, err := net.Listen("tcp", addrs[self.ID])
	if err != nil {
		return nil, fmt.Errorf("peer port: %w", err)
	}
	e := &ensemble{tick: ensembleTick(s.cfg.TickTime), kick: make(chan struct{}, 1)}
	e.mu.touches = map[int64]time.Duration{}
	e.role.Store(uint32(raftnode.RoleFollower))
	if self.Observer {
		e.role.Store(uint32(raftnode.RoleLearner))
	}
	ptls, err := s.cfg.quorumTLS(s.log.With("component", "peers"))
	if err != nil {
		l.Close()
		return nil, err
	}
	limits := newPeerLimits(s.cfg.JuteMaxBuffer, s.cfg.PeerMaxSnapshot)
	t := newPeerTransport(self.ID, addrs, limits, s.log.With("component", "peers"))
	t.tls = ptls
	if ptls != nil {
		s.log.Info("peer transport over TLS", "sslQuorum", ptls.dial, "portUnification", ptls.acceptPlain)
	}
	t.onSes = s.touchedElsewhere
	e.transport = t
	s.ens = e
	node, err := raftnode.Start(raftnode.Config{
		ID:                        self.ID,
		Peers:                     peers,
		Dir:                       dir,
		TickInterval:              e.tick,
		ElectionTicks:             10,
		HeartbeatTicks:            1,
		SnapshotEntries:           s.cfg.SnapCount,
		SnapshotRetain:            s.cfg.SnapRetainCount,
		Transport:                 t,
		HandOver:                  true,
		TransportReportsSnapshots: true,
		OnStateChange:             s.stateChanged,
		Logger:                    s.log.With("component", "raft"),
		LogFS:                     fs,
	}, stateMachine{s})
	if err != nil {
		l.Close()
		return nil, err
	}
	e.node = node
	t.node = node
	t.start(l)
	return &raftReplicator{node: node, transport: t, maxEntry: limits.entry}, nil
}

// stateChanged is raftnode's OnStateChange (on the raft loop: quick).
func (s *Server) stateChanged(leader uint64, role raftnode.Role) {
	s.ens.leader.Store(leader)
	s.ens.role.Store(uint32(role))
	s.ens.led.changed(leader, time.Now())
	select {
	case s.ens.kick <- struct{}{}:
	default:
	}
}

// serving reports whether the server takes read-write clients: always when
// standalone; in an ensemble while it knows a leader.
func (s *Server) serving() bool {
	return s.ens == nil || s.ens.leader.Load() != 0
}

// ownerID is the owner this server writes in its txns (znode.Txn.Owner):
// its myid in an ensemble, 0 (no owner check) when standalone.
func (s *Server) ownerID() int64 {
	if s.ens == nil {
		return 0
	}
	return int64(s.cfg.MyID)
}

// isLeader reports whether this server decides session expiry.
func (s *Server) isLeader() bool {
	return s.ens == nil || raftnode.Role(s.ens.role.Load()) == raftnode.RoleLeader
}

// noteActivity records a session's activity for the leader.
func (s *Server) noteActivity(id int64, timeout time.Duration) {
	if s.ens == nil || id == 0 || s.isLeader() {
		return
	}
	s.ens.mu.Lock()
	s.ens.mu.touches[id] = timeout
	s.ens.mu.Unlock()
}

// touchedElsewhere takes the session activity another server forwarded.
func (s *Server) touchedElsewhere(ts []sessionTouch) {
	now := time.Now()
	for _, t := range ts {
		if s.tracker.touch(t.id, now) && t.timeout > 0 {
			s.tracker.setTimeout(t.id, t.timeout)
		}
	}
}

// watchEnsemble follows the leader: it closes client connections while
// there is none, closes read-only connections when there is one again,
// drops the unforwarded activity when this server becomes leader, and
// forwards session activity to the leader every tickTime/2.
func (s *Server) watchEnsemble() {
	e := s.ens
	t := time.NewTicker(e.tick)
	defer t.Stop()
	var noLeaderSince, lastFlush time.Time
	wasLeader := false
	flushEvery := max(s.cfg.TickTime/2, e.tick)
	for {
		select {
		case <-s.done:
			return
		case <-e.kick:
		case <-t.C:
		}
		now := time.Now()
		leader := e.leader.Load()
		isLeader := s.isLeader()
		if isLeader && !wasLeader {
			// The sessions' fresh lease is expireSessions' (the same
			// goroutine as expiry, so none expires before it).
			e.mu.Lock()
			clear(e.mu.touches)
			e.mu.Unlock()
		}
		wasLeader = isLeader
		if leader == 0 {
			if noLeaderSince.IsZero() {
				noLeaderSince = now
			}
			if now.Sub(noLeaderSince) >= servingGraceTicks*e.tick {
				s.closeClients(false, "no leader: not serving")
			}
		} else {
			if !noLeaderSince.IsZero() {
				s.log.Info("serving", "leader", leader, "mode", s.mode(), "after", now.Sub(noLeaderSince).String())
			}
			noLeaderSince = time.Time{}
			s.closeClients(true, "a leader is back: read-only session ends")
		}
		if now.Sub(lastFlush) >= flushEvery {
			lastFlush = now
			if leader != 0 && !isLeader {
				s.forwardActivity(leader)
			}
		}
	}
}

// forwardActivity sends the session activity gathered since the last
// batch to the leader.
func (s *Server) forwardActivity(leader uint64) {
	e := s.ens
	e.mu.Lock()
	if len(e.mu.touches) == 0 {
		e.mu.Unlock()
		return
	}
	ts := make([]sessionTouch, 0, len(e.mu.touches))
	for id, timeout := range e.mu.touches {
		ts = append(ts, sessionTouch{id: id, timeout: timeout})
	}
	clear(e.mu.touches)
	e.mu.Unlock()
	e.transport.sendTouches(leader, ts)
}

// closeClients closes the client connections that are read-only (readOnly
// true) or read-write (false).
func (s *Server) closeClients(readOnly bool, reason string) {
	for _, c := range s.connections() {
		if c.readOnly.Load() == readOnly && c.sessionID() != 0 {
			c.close(reason)
		}
	}
}

// ensembleStatus is what the four-letter words report about the ensemble.
type ensembleStatus struct {
	learners, followers, syncedFollowers, syncedObservers int
	learnerIDs                                            []uint64 // the active ones, sorted
}

// followerStatus counts, on the leader, the members it replicates to.
func (s *Server) followerStatus() ensembleStatus {
	var out ensembleStatus
	if s.ens == nil || !s.isLeader() {
		return out
	}
	// Not Status: mntr must answer while the raft loop is inside an fsync.
	st := s.ens.node.RecentStatus()
	self := st.Progress[st.ID]
	ids := make([]uint64, 0, len(st.Progress))
	for id := range st.Progress {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		pr := st.Progress[id]
		if id == st.ID || !pr.Active {
			continue
		}
		out.learners++
		out.learnerIDs = append(out.learnerIDs, id)
		synced := strings.HasSuffix(strings.ToLower(pr.State), "replicate") && self.Match-pr.Match < 1000
		if pr.Learner {
			if synced {
				out.syncedObservers++
			}
			continue
		}
		out.followers++
		if synced {
			out.syncedFollowers++
		}
	}
	return out
}
