package zkafkatest

import (
	"fmt"
	"strconv"
	"strings"
)

// A Member is one server of a cluster, a broker or a ZooKeeper server; or
// Clients, everything outside the cluster (the test's clients); or
// OtherBrokers, the brokers as clients of one broker's inter-broker
// listener (replica fetches, the controller's requests; see Cut).
type Member struct {
	Kind Kind
	ID   int32 // broker.id, or the ZooKeeper server's myid (1 standalone)
}

// Kind is what a Member is.
type Kind string

const (
	KindBroker    Kind = "broker"
	KindZooKeeper Kind = "zookeeper"
	KindClients   Kind = "clients"
	KindBrokers   Kind = "brokers"
	// kindHarness is the cluster's own ZooKeeper session (MoveLeader,
	// waiting for brokers): its links never fail.
	kindHarness Kind = "harness"
)

// Broker is the broker with broker.id id.
func Broker(id int32) Member { return Member{Kind: KindBroker, ID: id} }

// ZooKeeperServer is the ZooKeeper server with myid id (1 when standalone).
func ZooKeeperServer(id int32) Member { return Member{Kind: KindZooKeeper, ID: id} }

// Clients stands for every client of the cluster.
var Clients = Member{Kind: KindClients}

// OtherBrokers stands for the brokers when they talk to a broker: Cut(
// OtherBrokers, Broker(n)) cuts broker n's inter-broker listener from
// every broker (itself included), so its followers fetch nothing from it
// and the controller reaches it no more, while its clients keep it.
// Cut(Broker(m), Broker(n)) parts just the two.
var OtherBrokers = Member{Kind: KindBrokers}

var harness = Member{Kind: kindHarness}

func (m Member) String() string {
	if m.Kind == KindClients || m.Kind == KindBrokers || m.Kind == kindHarness {
		return string(m.Kind)
	}
	return string(m.Kind) + "-" + strconv.Itoa(int(m.ID))
}

// ParseMember reads a Member as String writes it: "broker-1",
// "zookeeper-2", "clients", "brokers".
func ParseMember(s string) (Member, error) {
	switch s {
	case string(KindClients):
		return Clients, nil
	case string(KindBrokers):
		return OtherBrokers, nil
	}
	kind, id, ok := strings.Cut(s, "-")
	n, err := strconv.ParseInt(id, 10, 32)
	if !ok || err != nil || (Kind(kind) != KindBroker && Kind(kind) != KindZooKeeper) {
		return Member{}, fmt.Errorf("zkafkatest: %q is not a member (broker-N, zookeeper-N, clients or brokers)", s)
	}
	return Member{Kind: Kind(kind), ID: int32(n)}, nil
}
