package controller

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/zkmeta"
)

// ZKStore is the Store over the broker's ZooKeeper session, in Kafka's
// ZooKeeper layout (package zkmeta).
type ZKStore struct {
	ZK       *zkmeta.Client
	BrokerID int32
	// UncleanDefault is the broker's unclean.leader.election.enable.
	UncleanDefault bool
}

// Elect is Kafka's KafkaZkClient.registerControllerAndIncrementControllerEpoch.
//
// A /controller that already exists may be this broker's own, from an
// election whose reply was lost (the connection dropped after the multi
// applied): as Kafka's checkControllerAndEpoch, one owned by this session
// and naming this broker means the election was won, at the epoch
// /controller_epoch holds now.
func (s *ZKStore) Elect() (int32, int32, error) {
	if ok, err := s.ZK.Exists("/controller"); err != nil {
		return 0, 0, err
	} else if ok {
		return s.ownElection()
	}
	epoch, version, err := s.controllerEpoch()
	if err != nil {
		return 0, 0, err
	}
	z := zkmeta.ControllerZNode{Version: 2, BrokerID: s.BrokerID, Timestamp: zkmeta.NowMillisString()}
	err = s.ZK.Multi(
		&zk.CreateRequest{Path: "/controller", Data: zkmeta.MustJSON(z), Flags: zk.FlagEphemeral},
		&zk.SetDataRequest{Path: "/controller_epoch", Data: []byte(strconv.Itoa(int(epoch + 1))), Version: version},
	)
	if errors.Is(err, zk.ErrNodeExists) {
		return s.ownElection()
	}
	if errors.Is(err, zk.ErrBadVersion) {
		return 0, 0, ErrNotElected
	}
	if err != nil {
		return 0, 0, err
	}
	return epoch + 1, version + 1, nil
}

// ownElection reports the epoch of an existing /controller that this
// session created for this broker, or ErrNotElected.
func (s *ZKStore) ownElection() (int32, int32, error) {
	data, st, err := s.ZK.Get("/controller")
	if errors.Is(err, zk.ErrNoNode) {
		return 0, 0, ErrNotElected // gone meanwhile: the next watch elects
	}
	if err != nil {
		return 0, 0, err
	}
	var z zkmeta.ControllerZNode
	if json.Unmarshal(data, &z) != nil || z.BrokerID != s.BrokerID || st.EphemeralOwner != s.ZK.Conn.SessionID() {
		return 0, 0, ErrNotElected
	}
	return s.controllerEpoch()
}

// controllerEpoch reads /controller_epoch, creating it with 0 (Kafka's
// initial epoch) if missing.
func (s *ZKStore) controllerEpoch() (int32, int32, error) {
	for {
		data, st, err := s.ZK.Get("/controller_epoch")
		if err == nil {
			n, err := strconv.Atoi(string(data))
			if err != nil {
				return 0, 0, fmt.Errorf("bad /controller_epoch %q", data)
			}
			return int32(n), st.Version, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return 0, 0, err
		}
		if err := s.ZK.Create("/controller_epoch", []byte("0"), 0); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return 0, 0, err
		}
	}
}

// Brokers reads /brokers/ids with each broker's epoch, the czxid of its
// ephemeral (Kafka's broker epoch, KIP-380), and its endpoints.
func (s *ZKStore) Brokers() (map[int32]BrokerInfo, error) {
	ids, err := s.ZK.Children("/brokers/ids")
	if err != nil {
		return nil, err
	}
	out := map[int32]BrokerInfo{}
	for _, name := range ids {
		id, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		data, st, err := s.ZK.Get("/brokers/ids/" + name)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		info, err := ParseBrokerZNode(data, st.Czxid)
		if err != nil {
			info = BrokerInfo{Epoch: st.Czxid} // live, though unreachable
		}
		out[int32(id)] = info
	}
	return out, nil
}

// Topics reads topics' assignments and partition states.
func (s *ZKStore) Topics(names []string) ([]TopicRead, error) {
	if names == nil {
		var err error
		if names, err = s.ZK.Children("/brokers/topics"); err != nil {
			return nil, err
		}
	}
	out := make([]TopicRead, 0, len(names))
	for _, name := range names {
		t, err := s.topic(name)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func (s *ZKStore) topic(name string) (TopicRead, error) {
	t := TopicRead{Topic: name, Unclean: s.UncleanDefault}
	data, _, err := s.ZK.Get(zkmeta.TopicPath(name))
	if errors.Is(err, zk.ErrNoNode) {
		t.Deleted = true
		return t, nil
	}
	if err != nil {
		return t, err
	}
	id, replicas, err := zkmeta.DecodeTopicZNode(data)
	if err != nil {
		return t, fmt.Errorf("%s: %w", zkmeta.TopicPath(name), err)
	}
	var moves zkmeta.TopicZNode // adding_replicas, removing_replicas
	json.Unmarshal(data, &moves)
	t.TopicID = id
	if data, _, err := s.ZK.Get(zkmeta.TopicConfigPath(name)); err == nil {
		var z zkmeta.ConfigZNode
		if json.Unmarshal(data, &z) == nil {
			if v, ok := z.Config["unclean.leader.election.enable"]; ok {
				t.Unclean = v == "true"
			}
		}
	}
	for p, r := range replicas {
		pr := PartitionRead{Replicas: r, Adding: moves.AddingReplicas[strconv.Itoa(p)], Removing: moves.RemovingReplicas[strconv.Itoa(p)]}
		data, st, err := s.ZK.Get(zkmeta.StatePath(name, p))
		switch {
		case err == nil:
			var z zkmeta.PartitionStateZNode
			if err := json.Unmarshal(data, &z); err != nil {
				return t, fmt.Errorf("%s: %w", zkmeta.StatePath(name, p), err)
			}
			pr.HasState, pr.ZkVersion = true, st.Version
			pr.State = LeaderAndISR{Leader: z.Leader, LeaderEpoch: z.LeaderEpoch, ISR: z.ISR, ControllerEpoch: z.ControllerEpoch}
		case !errors.Is(err, zk.ErrNoNode):
			return t, err
		}
		t.Partitions = append(t.Partitions, pr)
	}
	return t, nil
}

// StateZNode is s as Kafka writes it.
func StateZNode(s LeaderAndISR) []byte {
	isr := s.ISR
	if isr == nil {
		isr = []int32{}
	}
	return zkmeta.MustJSON(zkmeta.PartitionStateZNode{ControllerEpoch: s.ControllerEpoch, Leader: s.Leader,
		Version: 1, LeaderEpoch: s.LeaderEpoch, ISR: isr})
}

// WriteStates writes ws in one multi fenced by /controller_epoch's version.
func (s *ZKStore) WriteStates(epochZkVersion int32, ws []StateWrite) ([]int32, error) {
	return s.Write(epochZkVersion, ws, nil)
}

// Write writes the topic znodes ts (at any version, as Kafka's
// setTopicAssignment) and the states ws in one multi fenced by
// /controller_epoch's version.
func (s *ZKStore) Write(epochZkVersion int32, ws []StateWrite, ts []TopicWrite) ([]int32, error) {
	ops := []any{&zk.CheckVersionRequest{Path: "/controller_epoch", Version: epochZkVersion}}
	for _, t := range ts {
		ops = append(ops, &zk.SetDataRequest{Path: zkmeta.TopicPath(t.Topic), Data: TopicZNode(t), Version: -1})
	}
	creating := map[string]bool{}
	ensure := func(p string) {
		if creating[p] {
			return
		}
		creating[p] = true
		if ok, _ := s.ZK.Exists(p); !ok {
			ops = append(ops, &zk.CreateRequest{Path: p})
		}
	}
	for _, w := range ws {
		path := zkmeta.StatePath(w.Partition.Topic, int(w.Partition.Partition))
		if w.ZkVersion < 0 {
			ensure(zkmeta.PartitionsPath(w.Partition.Topic))
			ensure(zkmeta.PartitionPath(w.Partition.Topic, int(w.Partition.Partition)))
			ops = append(ops, &zk.CreateRequest{Path: path, Data: StateZNode(w.State)})
			continue
		}
		ops = append(ops, &zk.SetDataRequest{Path: path, Data: StateZNode(w.State), Version: w.ZkVersion})
	}
	failed, err := s.ZK.MultiAt(ops...)
	if err != nil {
		if failed == 0 && errors.Is(err, zk.ErrBadVersion) {
			return nil, ErrFenced
		}
		return nil, err
	}
	versions := make([]int32, len(ws))
	for i, w := range ws {
		versions[i] = w.ZkVersion + 1 // a create gives version 0
	}
	return versions, nil
}
