package kafkafaults

import (
	"fmt"
	"slices"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/kcluster"
	"github.com/zkafka/zkafka/internal/faultproxy"
)

// leaderKill: kill -9 of partition (i mod 6)'s leader; its partitions
// move to another ISR member and take writes again; the broker restarts
// and rejoins the ISR.
func leaderKill(r *run, i int) {
	r.t.Helper()
	victim := r.c.Leader(topic, int32(i)%parts)
	led := r.c.LedBy(topic, parts, victim)
	t0 := time.Now()
	r.c.Kill9(victim)
	r.waitNewLeader(led, victim, "kill -9")
	r.waitWrites("failover", led, t0)
	r.c.Restart(victim)
	r.recovered(fmt.Sprintf("restarting killed leader %d", victim))
}

// controllerKill: kill -9 of the controller; another broker is elected
// (controller_epoch rises) and the dead one's partitions move.
func controllerKill(r *run, _ int) {
	r.t.Helper()
	ctrl, epoch := r.c.Controller(), r.c.ControllerEpoch()
	led := r.c.LedBy(topic, parts, ctrl)
	t0 := time.Now()
	r.c.Kill9(ctrl)
	ok := pollBound(r, func() bool {
		now := r.c.Controller()
		return now > 0 && now != ctrl && r.c.ControllerEpoch() > epoch
	})
	if !ok {
		r.t.Fatalf("no new controller within %v of kill -9 of controller %d (now %d, epoch %d, was %d)",
			r.failoverBound(), ctrl, r.c.Controller(), r.c.ControllerEpoch(), epoch)
	}
	r.measure("controller elected", time.Since(t0))
	if len(led) > 0 {
		r.waitNewLeader(led, ctrl, "kill -9")
		r.waitWrites("failover", led, t0)
	}
	r.c.Restart(ctrl)
	r.recovered(fmt.Sprintf("restarting killed controller %d", ctrl))
}

func pollBound(r *run, cond func() bool) bool { return kcluster.Poll(r.failoverBound(), cond) }

// leaderPause: SIGSTOP of a leader past its session: ZooKeeper expires it
// and the controller moves its partitions; then SIGCONT, with the
// producer's requests still in flight on the old leader's sockets (a
// client gives up on a silent connection only after its request timeout):
// replaced, it must not acknowledge them (Check catches an acknowledgement
// at an offset the new leader reused), and it re-registers and rejoins the
// ISR as a follower after truncating. Writes resume on every partition it
// led.
func leaderPause(r *run, i int) {
	r.t.Helper()
	victim := r.c.Leader(topic, int32(i)%parts)
	led := r.c.LedBy(topic, parts, victim)
	t0 := time.Now()
	r.c.Pause(victim)
	ok := pollBound(r, func() bool { return !slices.Contains(r.c.Registered(), victim) })
	if !ok {
		r.c.Resume(victim)
		r.t.Fatalf("paused broker %d still registered %v after the pause", victim, r.failoverBound())
	}
	r.measure("session expired", time.Since(t0))
	r.waitNewLeader(led, victim, "SIGSTOP")
	// Woken while the producer still has requests in flight on its socket:
	// the replaced leader must not acknowledge them.
	r.c.Resume(victim)
	r.waitWrites("failover", led, t0)
	r.recovered(fmt.Sprintf("SIGCONT of replaced leader %d", victim))
}

// followerCut: the replica fetches of a follower F of partition (i mod 6)
// are cut at every other broker's inter-broker proxy (blackhole on even
// cycles, refuse on odd ones; the controller's requests to F and F's
// other requests pass); F leaves the ISR of the partitions it
// follows within replica.lag.time.max.ms (plus slack), writes go on with
// min.insync.replicas 2, and F rejoins after healing.
func followerCut(r *run, i int) {
	r.t.Helper()
	p := int32(i) % parts
	s, err := r.c.State(topic, p)
	if err != nil {
		r.t.Fatal(err)
	}
	follower := int32(-1)
	for _, id := range s.ISR {
		if id != s.Leader {
			follower = id
			break
		}
	}
	if follower < 0 {
		r.t.Fatalf("partition %d has no follower in its ISR %v", p, s.ISR)
	}
	// The cut names the follower's fetches by the replica id in their Fetch
	// requests (faultproxy.CutReplica), whatever client id its fetcher uses.
	seen := 0
	for _, b := range r.c.Brokers {
		if b.ID != follower {
			seen += b.Proxy.SeenReplica(follower)
		}
	}
	if seen == 0 {
		r.t.Fatalf("no Fetch from replica %d reached the other brokers' REPLICATION listeners (their proxies): "+
			"the follower does not fetch through the advertised inter-broker listener", follower)
	}
	mode := faultproxy.Blackhole
	if i%2 == 1 {
		mode = faultproxy.Refuse
	}
	followed := []int32{}
	for q := range parts {
		if l := r.c.Leader(topic, q); l != follower {
			followed = append(followed, q)
		}
	}
	cut(r, follower, mode)
	t0 := time.Now()
	bound := r.c.Opts.ReplicaLag + 20*time.Second
	ok := kcluster.Poll(bound, func() bool {
		for _, q := range followed {
			if s, err := r.c.State(topic, q); err != nil || slices.Contains(s.ISR, follower) {
				return false
			}
		}
		return true
	})
	if !ok {
		s, _ := r.c.State(topic, p)
		cut(r, follower, faultproxy.Pass)
		r.t.Fatalf("%v cut of broker %d's fetches: ISR of partition %d is still %v after %v (replica.lag.time.max.ms %v)",
			mode, follower, p, s.ISR, bound, r.c.Opts.ReplicaLag)
	}
	r.measure("isr shrink", time.Since(t0))
	r.waitWrites("writes during cut", followed, time.Now())
	t1 := time.Now()
	cut(r, follower, faultproxy.Pass)
	r.recovered(fmt.Sprintf("healing broker %d's fetches", follower))
	r.measure("isr expand", time.Since(t1))
}

// cut applies mode to follower's replica fetches at every other broker's
// inter-broker proxy (Pass heals).
func cut(r *run, follower int32, mode faultproxy.Mode) {
	for _, b := range r.c.Brokers {
		if b.ID != follower {
			b.Proxy.CutReplica(follower, mode)
		}
	}
}

// rollingRestart: SIGTERM of every broker in turn: the controlled shutdown
// moves its leadership away before it exits (none of its partitions is
// led by it once it has exited), writes continue, and it restarts and
// rejoins before the next one goes.
func rollingRestart(r *run, _ int) {
	r.t.Helper()
	for _, b := range r.c.Brokers {
		led := r.c.LedBy(topic, parts, b.ID)
		t0 := time.Now()
		r.c.Term(b.ID, 30*time.Second)
		r.measure("controlled shutdown", time.Since(t0))
		if still := r.c.LedBy(topic, parts, b.ID); len(still) > 0 {
			r.t.Fatalf("broker %d exited after SIGTERM still leading partitions %v: the controlled shutdown did not move them", b.ID, still)
		}
		if len(led) > 0 {
			r.waitWrites("failover", led, t0)
		}
		r.c.Restart(b.ID)
		r.recovered(fmt.Sprintf("restarting broker %d", b.ID))
	}
}
