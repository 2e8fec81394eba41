package zkafkatest

import (
	"context"
	"net"

	"github.com/zkafka/zkafka/broker"
)

// Inter-broker links: every broker advertises its INTERNAL listener at the
// address of the link OtherBrokers → it, but no broker dials that address
// for another broker: its broker.Config.InterBrokerDial turns a dial of
// broker n's advertised address into a dial of the pair link from it to n
// (Broker(m) → Broker(n)), so that Cut(Broker(m), Broker(n)) parts exactly
// that pair, both still reaching ZooKeeper and their clients. A broker's
// connections to itself (the controller's channel to its own broker) and
// anyone else's (a client given the INTERNAL address) go through the
// shared link OtherBrokers → n.

// addPairLinks adds the links Broker(m) → Broker(n) that two brokers do
// not have yet, each pointed at n's inter-broker listener if n runs.
func (c *Cluster) addPairLinks() error {
	for _, from := range c.brokers {
		for _, to := range c.brokers {
			if from == to || c.net.get(Broker(from.id), Broker(to.id)) != nil {
				continue
			}
			k, err := c.net.add(Broker(from.id), Broker(to.id), "127.0.0.1:0")
			if err != nil {
				return err
			}
			if shared := c.net.get(OtherBrokers, Broker(to.id)); shared != nil {
				k.setTarget(shared.p.Target())
			}
		}
	}
	return nil
}

// interBrokerDial is broker from's InterBrokerDial: a plain dial, to the
// pair link when addr is another broker's advertised inter-broker address.
func (c *Cluster) interBrokerDial(from int32) broker.InterBrokerDialer {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if k := c.net.pairLink(from, addr); k != nil {
			addr = k.addr()
		}
		return d.DialContext(ctx, network, addr)
	}
}

// pairLink is the link Broker(from) → Broker(n) for the broker n whose
// link OtherBrokers → n listens at addr; nil when there is none (addr is
// from's own, or not a broker's).
func (n *network) pairLink(from int32, addr string) *link {
	for _, k := range n.matching(func(src, _ Member) bool { return src == OtherBrokers }) {
		if k.addr() == addr && k.to != Broker(from) {
			return n.get(Broker(from), k.to)
		}
	}
	return nil
}

// brokerLinks are the links into broker m's inter-broker listener: the
// shared one and the pair links from the other brokers.
func (n *network) brokerLinks(m Member) []*link {
	return n.matching(func(from, to Member) bool {
		return to == m && (from == OtherBrokers || from.Kind == KindBroker)
	})
}
