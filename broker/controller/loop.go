package controller

import (
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrFenced is a Store's answer when /controller_epoch is no longer at the
// version this controller set: another broker was elected since.
var ErrFenced = errors.New("controller: fenced by a newer controller epoch")

// ErrNotElected is Elect's answer when another broker holds /controller.
var ErrNotElected = errors.New("controller: another broker is the controller")

// Store is the controller's ZooKeeper: every method does IO, none decides.
type Store interface {
	// Elect creates the ephemeral /controller for this broker and bumps
	// /controller_epoch at the version read, in one multi; it returns the
	// new epoch and /controller_epoch's new version, or ErrNotElected.
	Elect() (epoch, epochZkVersion int32, err error)
	// Brokers reads /brokers/ids: each broker's epoch (czxid) and
	// endpoints.
	Brokers() (map[int32]BrokerInfo, error)
	// Topics reads the named topics (every topic when names is nil).
	Topics(names []string) ([]TopicRead, error)
	// Write writes the states and topic znodes in one multi whose first
	// op checks /controller_epoch at epochZkVersion (ErrFenced when it
	// fails) and returns the state znodes' new versions.
	Write(epochZkVersion int32, ws []StateWrite, ts []TopicWrite) ([]int32, error)
	// ReassignmentsDone takes completed moves out of
	// /admin/reassign_partitions (deleting it when none remain).
	ReassignmentsDone(epochZkVersion int32, ids []PartitionID) error
	// DeleteTopic deletes a topic's znodes (its assignment and states,
	// its config, its /admin/delete_topics marker) once /controller_epoch
	// is checked at epochZkVersion.
	DeleteTopic(epochZkVersion int32, name string) error
}

// Controller runs Core in its own loop: the loop goroutine is the only one
// that touches Core; watches and timers enter as Submit'ted events.
type Controller struct {
	core     *Core
	cfg      Config
	store    Store
	channels Channels
	log      *slog.Logger
	events   chan request
	// brokers are the live brokers as last read, with their endpoints
	// (Core keeps their epochs). Owned by the loop.
	brokers map[int32]BrokerInfo
	// onChange reports elections and resignations (the broker's view of
	// who controls, used to fence its own controller writes).
	onChange func(active bool, epoch, epochZkVersion int32)
}

// New returns a controller that has not run for election yet.
// Its requests to the brokers go through channels (see Channels).
func New(cfg Config, store Store, channels Channels, onChange func(bool, int32, int32), log *slog.Logger) *Controller {
	return &Controller{core: NewCore(cfg), cfg: cfg, store: store, channels: channels, onChange: onChange, log: log,
		events: make(chan request, 64)}
}

// request is one queued input: read runs on the loop and returns the
// event to step (nil: none); processed, if set, closes after the step.
type request struct {
	read func() Event
	// after, if set, runs on the loop once the step is done.
	after     func()
	processed chan struct{}
}

// The requests the loop accepts. Each is read by the loop itself, so that
// what it reads and what it decides from it stay in order.

// TryElect runs for controller (at start, and when /controller vanished)
// and returns once the election, and if won the failover, is done.
func (c *Controller) TryElect(done <-chan struct{}) { c.submit(done, true, c.elect) }

// Resign tells the loop that this broker lost control (session expiry,
// /controller names another broker). It does not wait.
func (c *Controller) Resign(done <-chan struct{}) {
	c.submit(done, false, func() Event { return Resigned{} })
}

// BrokersChanged makes the loop re-read /brokers/ids. It does not wait.
func (c *Controller) BrokersChanged(done <-chan struct{}) {
	c.submit(done, false, func() Event {
		if !c.isActive() {
			return nil
		}
		b, err := c.store.Brokers()
		if err != nil {
			c.log.Warn("controller: reading brokers", "err", err)
			return nil
		}
		c.setBrokers(b)
		return BrokersChanged{Brokers: epochsOf(b)}
	})
}

// TopicsChanged makes the loop re-read the named topics (nil: all) and
// returns once their states are written.
func (c *Controller) TopicsChanged(done <-chan struct{}, names []string) {
	names = slices.Clone(names)
	c.submit(done, true, func() Event {
		if !c.isActive() {
			return nil
		}
		ts, err := c.store.Topics(names)
		if err != nil {
			c.log.Warn("controller: reading topics", "err", err)
			return nil
		}
		return TopicsChanged{Topics: ts, All: names == nil}
	})
}

func (c *Controller) submit(done <-chan struct{}, wait bool, read func() Event) {
	c.submitRequest(done, wait, request{read: read})
}

func (c *Controller) submitRequest(done <-chan struct{}, wait bool, r request) {
	if wait {
		r.processed = make(chan struct{})
	}
	select {
	case c.events <- r:
	case <-done:
		return
	}
	if wait {
		select {
		case <-r.processed:
		case <-done:
		}
	}
}

func (c *Controller) isActive() bool { a, _, _ := c.core.Active(); return a }

// Run is the loop; it returns when done closes.
// With AutoRebalance, it steps RebalanceCheck every RebalanceInterval
// while this broker is the controller (Kafka's auto-leader-rebalance-task).
func (c *Controller) Run(done <-chan struct{}) {
	var tick <-chan time.Time
	if c.cfg.AutoRebalance && c.cfg.RebalanceInterval > 0 {
		t := time.NewTicker(c.cfg.RebalanceInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-done:
			return
		case r := <-c.events:
			c.handle(r)
		case <-tick:
			if c.isActive() {
				c.step(RebalanceCheck{}, false)
			}
		}
	}
}

func (c *Controller) handle(r request) {
	if ev := r.read(); ev != nil {
		c.step(ev, true)
	}
	if r.after != nil {
		r.after()
	}
	if r.processed != nil {
		close(r.processed)
	}
}

// step applies one event and carries out its effects; a fenced write
// resigns, another failed write re-reads the topics it touched and, if
// retry, decides once more from what it read (a write that fails again
// waits for the next event: a watch, a broker change).
func (c *Controller) step(ev Event, retry bool) {
	was, _, _ := c.core.Active()
	eff := c.core.Step(ev)
	if now, epoch, version := c.core.Active(); now != was {
		if !now {
			c.setBrokers(nil) // a resigned controller sends nothing more
		}
		if c.onChange != nil {
			c.onChange(now, epoch, version)
		}
	}
	_, _, version := c.core.Active()
	if len(eff.Writes) == 0 && len(eff.Topics) == 0 {
		c.finish(eff, version)
		return
	}
	versions, err := c.store.Write(version, eff.Writes, eff.Topics)
	switch {
	case errors.Is(err, ErrFenced):
		c.log.Warn("controller: fenced by a newer controller; resigning")
		c.step(Resigned{}, false)
		return
	case err != nil:
		c.log.Warn("controller: writing partition states; re-reading them", "err", err)
		if ts, rerr := c.store.Topics(topicsOf(eff)); rerr == nil {
			if cs, ok := ev.(ControlledShutdown); ok && retry {
				c.core.readTopics(ts) // and decide the shutdown again
				c.step(cs, false)
			} else if retry {
				c.step(TopicsChanged{Topics: ts}, false)
			} else {
				c.core.readTopics(ts) // known again (the failed write undone), decided at the next event
			}
		}
		return
	}
	c.core.Step(StatesWritten{Writes: eff.Writes, Versions: versions})
	c.finish(eff, version)
}

// finish carries out a step's effects after its writes landed: the
// requests, then the bookkeeping znodes (completed moves, deleted
// topics).
func (c *Controller) finish(eff Effects, version int32) {
	c.send(eff.Sends)
	if len(eff.Completed) > 0 {
		if err := c.store.ReassignmentsDone(version, eff.Completed); err != nil {
			c.log.Warn("controller: updating /admin/reassign_partitions", "err", err)
		}
	}
	for _, name := range eff.Deletes {
		if err := c.store.DeleteTopic(version, name); err != nil {
			c.log.Warn("controller: deleting topic znodes", "topic", name, "err", err)
			continue
		}
		c.log.Info("controller: topic deleted", "topic", name)
	}
}

// DeleteTopics starts the deletion of the topics marked in
// /admin/delete_topics (deletion.go). It does not wait.
func (c *Controller) DeleteTopics(done <-chan struct{}, names []string) {
	names = slices.Clone(names)
	c.submit(done, false, func() Event { return DeleteTopics{Topics: names} })
}

// Answered takes a broker's answer to one of the controller's requests
// (ChannelManager.Answered): StopReplica answers complete deletions. It
// does not wait.
func (c *Controller) Answered(done <-chan struct{}, to int32, resp kmsg.Response) {
	r, ok := resp.(*kmsg.StopReplicaResponse)
	if !ok {
		return
	}
	ev := StopReplicaAnswered{Broker: to, Error: r.ErrorCode}
	for _, p := range r.Partitions {
		ev.Results = append(ev.Results, StopResult{Partition: PartitionID{p.Topic, p.Partition}, Error: p.ErrorCode})
	}
	c.submit(done, false, func() Event { return ev })
}

// setBrokers records the live brokers and gives each its queue.
func (c *Controller) setBrokers(b map[int32]BrokerInfo) {
	c.brokers = b
	if c.channels != nil {
		c.channels.SetBrokers(b)
	}
}

// elect runs the election and, when won, the failover read.
func (c *Controller) elect() Event {
	if c.isActive() {
		return nil
	}
	epoch, version, err := c.store.Elect()
	if err != nil {
		if !errors.Is(err, ErrNotElected) {
			c.log.Warn("controller election", "err", err)
		}
		return nil
	}
	c.log.Info("this broker is the controller", "controller_epoch", epoch)
	brokers, err := c.store.Brokers()
	if err == nil {
		var ts []TopicRead
		if ts, err = c.store.Topics(nil); err == nil {
			c.setBrokers(brokers)
			return Elected{Epoch: epoch, EpochZkVersion: version, Brokers: epochsOf(brokers), Topics: ts}
		}
	}
	// Elected but blind: give control up; /controller goes with our
	// resignation only when the session does, so say so loudly.
	c.log.Error("controller: failover read failed", "err", err)
	return Elected{Epoch: epoch, EpochZkVersion: version, Brokers: map[int32]int64{}}
}

func topicsOf(eff Effects) []string {
	var out []string
	for _, w := range eff.Writes {
		if !slices.Contains(out, w.Partition.Topic) {
			out = append(out, w.Partition.Topic)
		}
	}
	for _, t := range eff.Topics {
		if !slices.Contains(out, t.Topic) {
			out = append(out, t.Topic)
		}
	}
	return out
}
