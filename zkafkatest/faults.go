package zkafkatest

import (
	"context"
	"fmt"
	"time"
)

// Stop shuts member m down gracefully, as SIGTERM would: a broker
// finishes its requests and closes its ZooKeeper session (its
// registration goes at once); a ZooKeeper server closes its connections
// (its clients move to another server of an ensemble). Its data stays for
// Start or Restart.
func (c *Cluster) Stop(m Member) error { return c.stop(m, false) }

// Kill stops member m as kill -9 would: every link from it is cut first,
// so nothing it does while closing reaches anyone (a broker's ZooKeeper
// session is not closed: its registration, and its controllership, stay
// until the session expires), and every connection to it ends at once.
//
// A broker's files are left as a crash leaves them: its partition logs
// (on a faultfs file system, internal/faultfs) lose every byte not yet
// fsynced, as after a machine crash, and it closes them without trimming
// or syncing, writes no high-watermark checkpoint and no producer-state
// snapshot (broker.Kill); its next start recovers them as after a crash.
// So an acks=1 record not yet flushed (no log.flush.interval.messages or
// flush.ms reached it) may be gone after Kill and StartMember, while an
// acks=all record of a replicated partition survives on its ISR. A
// ZooKeeper server shuts down at once with its links cut; it fsyncs each
// write before acknowledging it, so it loses nothing acknowledged.
func (c *Cluster) Kill(m Member) error { return c.stop(m, true) }

// StartMember starts a stopped or killed member again on its data, at the
// same address for its clients, and waits until it serves (a broker:
// until it has registered, which after a Kill waits for the old session
// to expire).
func (c *Cluster) StartMember(m Member) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m.Kind {
	case KindBroker:
		b := c.broker(m.ID)
		if b == nil {
			return fmt.Errorf("zkafkatest: no member %s", m)
		}
		if b.b != nil {
			return fmt.Errorf("zkafkatest: %s is running", m)
		}
		return c.startBroker(b)
	case KindZooKeeper:
		z := c.zk(m.ID)
		if z == nil {
			return fmt.Errorf("zkafkatest: no member %s", m)
		}
		if z.srv != nil {
			return fmt.Errorf("zkafkatest: %s is running", m)
		}
		return c.startZK(z)
	}
	return fmt.Errorf("zkafkatest: %s cannot be started", m)
}

// Restart stops member m gracefully if it runs, then starts it again.
func (c *Cluster) Restart(m Member) error {
	if c.Running(m) {
		if err := c.Stop(m); err != nil {
			return err
		}
	}
	return c.StartMember(m)
}

// Running reports whether member m is up.
func (c *Cluster) Running(m Member) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m.Kind {
	case KindBroker:
		b := c.broker(m.ID)
		return b != nil && b.b != nil
	case KindZooKeeper:
		z := c.zk(m.ID)
		return z != nil && z.srv != nil
	}
	return false
}

func (c *Cluster) stop(m Member, hard bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m.Kind {
	case KindBroker:
		if b := c.broker(m.ID); b != nil {
			return c.stopBroker(b, hard)
		}
	case KindZooKeeper:
		if z := c.zk(m.ID); z != nil {
			return c.stopZK(z, hard)
		}
	}
	return fmt.Errorf("zkafkatest: no member %s", m)
}

// Pause freezes member m as SIGSTOP would: on every link from or to it
// (its clients', the other brokers' and its own inter-broker links, its
// ZooKeeper sessions', its peers') no byte passes either way, connections
// stay open and new ones are accepted, until Resume. Its peers see it time
// out: a paused broker's ZooKeeper session expires after its timeout, a
// paused ZooKeeper leader loses its leadership, a paused follower leaves
// the ISR. Unlike a stopped process, a paused member still runs inside
// (its timers fire, its connections to itself pass).
func (c *Cluster) Pause(m Member) error { return c.setPaused(m, true) }

// Resume undoes Pause: the bytes held flow on.
func (c *Cluster) Resume(m Member) error { return c.setPaused(m, false) }

func (c *Cluster) setPaused(m Member, paused bool) error {
	if !c.isMember(m) {
		return fmt.Errorf("zkafkatest: no member %s", m)
	}
	for _, k := range c.net.touching(m) {
		k.setPaused(paused)
	}
	return nil
}

// Cut breaks the network between a and b both ways: their connections
// are reset at once and new ones are reset as they come, until Heal. The
// pairs that have links: Clients and a member (the test's clients); two
// brokers (their inter-broker connections both ways: replica fetches, the
// controller's requests, AlterPartition; each still reaches ZooKeeper and
// its clients); OtherBrokers and a broker (every connection to its
// inter-broker listener: the other brokers', and its own, as the
// controller's to itself); a broker and a ZooKeeper server (its session);
// two ZooKeeper servers (their raft traffic).
//
// Cutting broker m from broker n when one of them is the controller also
// cuts what the controller says to the other (LeaderAndIsr,
// UpdateMetadata) and the other's AlterPartition to it.
func (c *Cluster) Cut(a, b Member) error { return c.setCut(a, b, true) }

// Heal undoes Cut between a and b.
func (c *Cluster) Heal(a, b Member) error { return c.setCut(a, b, false) }

// Isolate cuts member m from every other member and the clients.
func (c *Cluster) Isolate(m Member) error {
	if !c.isMember(m) {
		return fmt.Errorf("zkafkatest: no member %s", m)
	}
	for _, k := range c.net.touching(m) {
		k.setCut(true)
	}
	return nil
}

// HealAll heals every cut and resumes every paused member.
func (c *Cluster) HealAll() {
	for _, k := range c.net.matching(func(from, _ Member) bool { return from != harness }) {
		k.setCut(false)
		k.setPaused(false)
	}
}

func (c *Cluster) setCut(a, b Member, cut bool) error {
	links := c.net.between(a, b)
	if a == OtherBrokers && b.Kind == KindBroker {
		links = c.net.brokerLinks(b)
	} else if b == OtherBrokers && a.Kind == KindBroker {
		links = c.net.brokerLinks(a)
	}
	if len(links) == 0 {
		return fmt.Errorf("zkafkatest: no link between %s and %s", a, b)
	}
	for _, k := range links {
		k.setCut(cut)
	}
	return nil
}

// ExpireSession expires ZooKeeper session id as its timeout would: its
// ephemerals go, and its client, reconnecting, is told the session
// expired (go-zookeeper's StateExpired).
func (c *Cluster) ExpireSession(id int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error = fmt.Errorf("zkafkatest: no ZooKeeper server runs")
	for _, z := range c.zks {
		if z.srv != nil {
			if err = z.srv.ExpireSession(ctx, id); err == nil {
				return nil
			}
		}
	}
	return err
}

func (c *Cluster) isMember(m Member) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return m.Kind == KindBroker && c.broker(m.ID) != nil || m.Kind == KindZooKeeper && c.zk(m.ID) != nil
}

// broker returns the broker with id id, or nil. c.mu must be held.
func (c *Cluster) broker(id int32) *brokerServer {
	for _, b := range c.brokers {
		if b.id == id {
			return b
		}
	}
	return nil
}

// zk returns the ZooKeeper server with myid id, or nil. c.mu must be held.
func (c *Cluster) zk(id int32) *zkServer {
	for _, z := range c.zks {
		if z.id == id {
			return z
		}
	}
	return nil
}
