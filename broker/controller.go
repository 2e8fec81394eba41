package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/controller"
	"github.com/zkafka/zkafka/broker/zkmeta"
)

// The broker's side of the controller (package broker/controller):
// registration in /brokers/ids, the watches that feed the controller's
// loop, and the broker's view of whether it is the controller, which
// fences the controller writes made outside the loop (topic creation and
// deletion). The decisions and the partition state writes are the
// controller package's.

type controllerState struct {
	mu           sync.Mutex
	active       bool
	epoch        int32
	epochVersion int32 // /controller_epoch's version after our bump
}

func (cs *controllerState) get() (active bool, epoch, version int32) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.active, cs.epoch, cs.epochVersion
}

func (cs *controllerState) set(active bool, epoch, version int32) {
	cs.mu.Lock()
	cs.active, cs.epoch, cs.epochVersion = active, epoch, version
	cs.mu.Unlock()
}

// epochCheck is the first op of every controller multi.
func (b *Broker) epochCheck() (*zk.CheckVersionRequest, int32, error) {
	active, epoch, version := b.ctrl.get()
	if !active {
		return nil, 0, errNotController
	}
	return &zk.CheckVersionRequest{Path: "/controller_epoch", Version: version}, epoch, nil
}

var errNotController = errors.New("this broker is not the controller")

// isrIsLive: a new partition's ISR is every live replica (followers
// replicate), in the controller's loop and in CreateTopics' own writes.
const isrIsLive = true

// startCluster registers the broker, runs for controller and starts the
// watches. Called once, by the first Serve.
func (b *Broker) startCluster(addr []net.Addr) error {
	if err := b.registerBroker(addr); err != nil {
		return err
	}
	close(b.registered)
	b.refreshBrokers()
	listener := b.cfg.interBrokerListener()
	channels := &controller.ChannelManager{Listener: listener, ClientOpts: b.interBrokerClientOpts(), Go: b.goTracked, Done: b.done, Log: b.log}
	channels.Answered = func(to int32, resp kmsg.Response) { b.ctl.Answered(b.done, to, resp) }
	b.ctl = controller.New(controller.Config{ISRIsLive: isrIsLive, BrokerID: b.cfg.BrokerID, Listener: listener,
		AutoRebalance: b.cfg.LeaderBalance.Enable, RebalanceInterval: b.cfg.LeaderBalance.CheckInterval,
		ImbalancePercentage: int(b.cfg.LeaderBalance.PerBrokerPct)},
		&controller.ZKStore{ZK: b.zk, BrokerID: b.cfg.BrokerID, UncleanDefault: storedDefault("unclean.leader.election.enable")(&b.cfg) == "true"},
		channels, b.controlChanged, b.log)
	b.goTracked("controller", func() { b.ctl.Run(b.done) })
	b.startReplication()
	b.tryElect()
	b.goTracked("zk-session", func() { b.sessionLoop(addr) })
	b.goTracked("zk-controller", b.controllerLoop)
	b.goTracked("zk-brokers", b.brokersLoop)
	b.goTracked("zk-topics", b.topicsLoop)
	b.goTracked("zk-delete-topics", b.deleteTopicsLoop)
	b.goTracked("zk-preferred-election", func() {
		b.watchAdminZNode(preferredElectionPath, b.preferredElectionZNodeAsked)
	})
	b.goTracked("zk-reassign-partitions", func() {
		b.watchAdminZNode(controller.ReassignPath, b.reassignZNodeAsked)
	})
	b.goTracked("zk-config-changes", b.configChangesLoop)
	b.startACLChangeLoops()
	return nil
}

// registerBroker creates the ephemeral /brokers/ids/{id}.
func (b *Broker) registerBroker(addr []net.Addr) error {
	eps, err := b.endpoints(addr)
	if err != nil {
		return err
	}
	z := brokerZNode(eps, b.cfg.Rack)
	host, port := eps[0].host, eps[0].port
	deadline := time.Now().Add(2 * b.cfg.ZooKeeperSessionTimeout)
	for {
		err = b.zk.Create(zkmeta.BrokerPath(b.cfg.BrokerID), zkmeta.MustJSON(z), zk.FlagEphemeral)
		if !errors.Is(err, zk.ErrNodeExists) {
			break
		}
		ok, st, ch, existsErr := b.zk.Conn.ExistsW(b.zk.Path(zkmeta.BrokerPath(b.cfg.BrokerID)))
		if existsErr == nil && ok && st.EphemeralOwner == b.zk.Conn.SessionID() {
			// Created by an earlier attempt of this session whose reply
			// was lost: ours (Kafka's checkedEphemeralCreate does the same).
			err = nil
			break
		}
		// Left by our previous process (kill -9): it goes when that
		// session expires. Another live broker with our id never goes.
		if time.Now().After(deadline) {
			return fmt.Errorf("broker.id %d is already registered in ZooKeeper (%s)", b.cfg.BrokerID, zkmeta.BrokerPath(b.cfg.BrokerID))
		}
		b.log.Warn("broker id still registered by an older session; waiting for it to expire", "path", zkmeta.BrokerPath(b.cfg.BrokerID))
		if existsErr == nil && ok {
			select {
			case <-ch:
			case <-time.After(time.Until(deadline)):
			case <-b.done:
				return ErrServerClosed
			}
		}
	}
	if err != nil {
		return fmt.Errorf("registering %s: %w", zkmeta.BrokerPath(b.cfg.BrokerID), err)
	}
	// The broker epoch is the registration's czxid (KIP-380): requests
	// the controller meant for an older registration are refused.
	if _, st, err := b.zk.Conn.Exists(b.zk.Path(zkmeta.BrokerPath(b.cfg.BrokerID))); err == nil && st != nil {
		b.epochs.broker.Store(st.Czxid)
	}
	b.log.Info("broker registered", "host", host, "port", port)
	return nil
}

// sessionLoop re-registers the broker after its ZooKeeper session expired
// (go-zookeeper then opens a new session, without our ephemerals).
func (b *Broker) sessionLoop(addr []net.Addr) {
	expired := false
	for {
		select {
		case <-b.done:
			return
		case ev, ok := <-b.zk.Events:
			if !ok {
				return
			}
			switch ev.State {
			case zk.StateExpired:
				b.log.Warn("ZooKeeper session expired")
				expired = true
				b.ctrl.set(false, 0, 0)
				b.ctl.Resign(b.done)
			case zk.StateHasSession:
				if expired {
					expired = false
					if !b.reregister(addr) {
						return
					}
					b.tryElect()
				}
			}
		}
	}
}

// reregister registers the broker again on a new session, retrying until
// it succeeds: a connection lost during the create (ZooKeeper flapping
// right after the expiry) must not leave the broker unregistered. It
// reports false if the broker shut down first.
func (b *Broker) reregister(addr []net.Addr) bool {
	for {
		err := b.registerBroker(addr)
		if err == nil {
			return true
		}
		if errors.Is(err, ErrServerClosed) {
			return false
		}
		b.log.Warn("re-registering after session expiry failed; retrying", "err", err)
		if !b.sleep(500 * time.Millisecond) {
			return false
		}
	}
}

// tryElect runs for controller once and records who won.
func (b *Broker) tryElect() {
	b.ctl.TryElect(b.done)
	if data, _, err := b.zk.Get("/controller"); err == nil {
		b.noteController(data)
	}
}

// controlChanged is told by the controller's loop when this broker
// became the controller or stopped being it.
func (b *Broker) controlChanged(active bool, epoch, epochZkVersion int32) {
	b.ctrl.set(active, epoch, epochZkVersion)
	if !active {
		return
	}
	b.cluster.setController(b.cfg.BrokerID)
	// Deletions, elections and moves left pending by the previous
	// controller, or asked for while none was.
	b.goTracked("controller-deletions", func() {
		if names, err := b.zk.Children("/admin/delete_topics"); err == nil {
			b.deleteTopics(names)
		}
		if ok, _ := b.zk.Exists(preferredElectionPath); ok {
			b.preferredElectionZNodeAsked()
		}
		if ok, _ := b.zk.Exists(controller.ReassignPath); ok {
			b.reassignZNodeAsked()
		}
	})
}

func (b *Broker) noteController(data []byte) {
	var z zkmeta.ControllerZNode
	if json.Unmarshal(data, &z) != nil {
		return
	}
	if active, _, _ := b.ctrl.get(); active && z.BrokerID != b.cfg.BrokerID {
		b.ctrl.set(false, 0, 0)
		b.ctl.Resign(b.done)
	}
	b.cluster.setController(z.BrokerID)
}

// controllerLoop watches /controller and runs again when it goes away.
func (b *Broker) controllerLoop() {
	for {
		ok, _, ch, err := b.zk.Conn.ExistsW(b.zk.Path("/controller"))
		if err != nil {
			if !b.sleep(time.Second) {
				return
			}
			continue
		}
		if !ok {
			b.cluster.setController(-1)
			select {
			case <-b.done:
				return // tryElect returns at once after Shutdown began
			default:
			}
			b.tryElect()
			continue
		}
		if data, _, err := b.zk.Get("/controller"); err == nil {
			b.noteController(data)
		}
		select {
		case <-ch:
		case <-b.done:
			return
		}
	}
}

// brokersLoop keeps the live broker list in sync with /brokers/ids.
func (b *Broker) brokersLoop() {
	for {
		ch := b.refreshBrokers()
		b.ctl.BrokersChanged(b.done)
		if ch == nil {
			if !b.sleep(time.Second) {
				return
			}
			continue
		}
		select {
		case <-ch:
		case <-b.done:
			return
		}
	}
}

// refreshBrokers reads /brokers/ids and returns the children watch.
func (b *Broker) refreshBrokers() <-chan zk.Event {
	ids, ch, err := b.zk.ChildrenW("/brokers/ids")
	if err != nil {
		return nil
	}
	m := map[int32]brokerInfo{}
	for _, s := range ids {
		id, err := strconv.Atoi(s)
		if err != nil {
			continue
		}
		data, _, err := b.zk.Get("/brokers/ids/" + s)
		var z zkmeta.BrokerZNode
		if err != nil || json.Unmarshal(data, &z) != nil {
			continue
		}
		info := brokerInfo{id: int32(id), host: z.Host, port: int32(z.Port), endpoints: parseEndpoints(&z), rack: z.Rack}
		if hp, ok := firstEndpoint(&z); z.Port < 0 && ok {
			// No PLAINTEXT listener: host and port are null and -1.
			info.host, info.port = hp.host, hp.port
		}
		m[int32(id)] = info
	}
	b.cluster.mu.Lock()
	b.cluster.brokers = m
	b.cluster.mu.Unlock()
	return ch
}

// topicsLoop follows /brokers/topics: new topics are loaded (and, by the
// controller, given partition states), deleted ones dropped.
func (b *Broker) topicsLoop() {
	for {
		names, ch, err := b.zk.ChildrenW("/brokers/topics")
		if err != nil {
			if !b.sleep(time.Second) {
				return
			}
			continue
		}
		if err := b.syncTopics(names); err != nil {
			b.log.Warn("syncing topics from ZooKeeper", "err", err)
		}
		b.ctl.TopicsChanged(b.done, nil)
		select {
		case <-ch:
		case <-b.done:
			return
		}
	}
}

// deleteTopicsLoop carries out deletions marked in /admin/delete_topics,
// when this broker is the controller.
func (b *Broker) deleteTopicsLoop() {
	for {
		names, ch, err := b.zk.ChildrenW("/admin/delete_topics")
		if err != nil {
			if !b.sleep(time.Second) {
				return
			}
			continue
		}
		b.deleteTopics(names)
		select {
		case <-ch:
		case <-b.done:
			return
		}
	}
}

// deleteTopics hands the marked topics to the controller's loop
// (controller/deletion.go), which ignores them unless this broker is the
// controller; the topic's znodes go once every replica answered
// StopReplica with delete, and every broker drops its data when the
// topic leaves /brokers/topics.
func (b *Broker) deleteTopics(names []string) {
	if len(names) > 0 {
		b.ctl.DeleteTopics(b.done, names)
	}
}
