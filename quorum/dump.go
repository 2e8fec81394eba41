package quorum

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// writeDump is the dump four-letter word: the sessions, their ephemerals
// and the connections. A standalone server and a leader write the sessions
// as Apache ZooKeeper's SessionTrackerImpl does, in expiry buckets (the
// deadline rounded up to a tick); a follower or observer as its
// LearnerSessionTracker ("Global Sessions(n):"); the connections as
// NIOServerCnxnFactory, in buckets too.
func (s *Server) writeDump(w io.Writer) {
	tree := s.tree.Load()
	sessions := tree.Sessions()
	ids := make([]int64, 0, len(sessions))
	for id := range sessions {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	io.WriteString(w, "SessionTracker dump:\n")
	if s.ens == nil || s.isLeader() {
		deadlines := s.tracker.deadlines()
		buckets := map[int64][]string{}
		for _, id := range ids {
			t := s.bucket(deadlines[id])
			buckets[t] = append(buckets[t], fmt.Sprintf("0x%x", id))
		}
		writeExpiryQueue(w, "Session", buckets, len(ids))
	} else {
		fmt.Fprintf(w, "Global Sessions(%d):\n", len(ids))
		for _, id := range ids {
			fmt.Fprintf(w, "0x%x\t%dms\n", id, sessions[id])
		}
	}
	io.WriteString(w, "ephemeral nodes dump:\n")
	var b strings.Builder
	withEphemerals := 0
	for _, id := range ids {
		eph := tree.Ephemerals(id, "/")
		if len(eph) == 0 && !s.stats.ownedEphemerals(id) {
			continue
		}
		withEphemerals++
		fmt.Fprintf(&b, "0x%x:\n", id)
		for _, p := range eph {
			fmt.Fprintf(&b, "\t%s\n", p)
		}
	}
	fmt.Fprintf(w, "Sessions with Ephemerals (%d):\n%s", withEphemerals, b.String())
	io.WriteString(w, "Connections dump:\n")
	s.writeConnectionBuckets(w)
}

// writeConnectionBuckets: a connection expires with its session; one
// without a session (a handshake, a four-letter word) within a tick.
func (s *Server) writeConnectionBuckets(w io.Writer) {
	deadlines := s.tracker.deadlines()
	conns := s.connections()
	sort.Slice(conns, func(i, j int) bool { return conns[i].started.Before(conns[j].started) })
	buckets := map[int64][]string{}
	for _, c := range conns {
		d, ok := deadlines[c.sessionID()]
		if !ok {
			d = time.Now().Add(s.cfg.TickTime)
		}
		t := s.bucket(d)
		buckets[t] = append(buckets[t], fmt.Sprintf("ip: %s sessionId: 0x%x", javaAddr(c.nc.RemoteAddr()), c.sessionID()))
	}
	writeExpiryQueue(w, "Connections", buckets, len(conns))
}

// bucket rounds a deadline up to the next multiple of the tick, as
// ZooKeeper's ExpiryQueue.roundToNextInterval; the result is unix ms.
func (s *Server) bucket(deadline time.Time) int64 {
	tick := s.cfg.TickTime.Milliseconds()
	if tick <= 0 {
		tick = 1
	}
	return (deadline.UnixMilli()/tick + 1) * tick
}

// writeExpiryQueue renders buckets as ExpiryQueue.dump: the number of
// buckets and of members, then each bucket in time order.
func writeExpiryQueue(w io.Writer, what string, buckets map[int64][]string, members int) {
	fmt.Fprintf(w, "%s Sets (%d)/(%d):\n", what, len(buckets), members)
	times := make([]int64, 0, len(buckets))
	for t := range buckets {
		times = append(times, t)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	for _, t := range times {
		// Java's Date.toString.
		fmt.Fprintf(w, "%d expire at %s:\n", len(buckets[t]), time.UnixMilli(t).Format("Mon Jan 02 15:04:05 MST 2006"))
		for _, m := range buckets[t] {
			fmt.Fprintf(w, "\t%s\n", m)
		}
	}
}

// deadlines returns when each tracked session expires if not heard from.
func (t *sessionTracker) deadlines() map[int64]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[int64]time.Time, len(t.mu.lastSeen))
	for id, seen := range t.mu.lastSeen {
		out[id] = seen.Add(t.mu.timeout[id])
	}
	return out
}
