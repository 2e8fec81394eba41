package broker

import (
	"net"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/broker/zkmeta"
)

// endpoint is one listener as registered in /brokers/ids: its name, its
// security protocol, and the host and port clients should use.
type endpoint struct {
	name, protocol, host string
	port                 int32
}

// endpoints are the listeners to register, given the addresses the
// listeners are bound to (addrs[i] is cfg.Listeners[i]'s): the advertised
// listeners when set (Kafka registers only those), else each listener's
// address, a fixed host kept and port 0 replaced by the bound port.
func (b *Broker) endpoints(addrs []net.Addr) ([]endpoint, error) {
	ls, err := b.cfg.listenerEntries(b.cfg.Listeners)
	if err != nil {
		return nil, err
	}
	var out []endpoint
	if len(b.cfg.AdvertisedListeners) > 0 {
		adv, err := b.cfg.listenerEntries(b.cfg.AdvertisedListeners)
		if err != nil {
			return nil, err
		}
		for _, a := range adv {
			e, err := makeEndpoint(a, a.addr)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	for i, l := range ls {
		if i >= len(addrs) {
			break // not served (Serve was given fewer listeners)
		}
		hostport := addrs[i].String()
		if h, p, err := net.SplitHostPort(l.addr); err == nil && h != "" && h != "0.0.0.0" && h != "::" {
			_, realPort, _ := net.SplitHostPort(hostport)
			if p == "0" {
				p = realPort
			}
			hostport = net.JoinHostPort(h, p)
		}
		e, err := makeEndpoint(l, hostport)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func makeEndpoint(l listenerEntry, hostport string) (endpoint, error) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return endpoint{}, err
	}
	port, err := strconv.Atoi(p)
	return endpoint{name: l.name, protocol: l.protocol, host: h, port: int32(port)}, err
}

// brokerZNode is the registration Kafka writes for these endpoints: every
// listener in endpoints and listener_security_protocol_map, and host/port
// those of the PLAINTEXT listener (null and -1 without one, as Kafka), or
// of the first listener, which older zkafka brokers read; "rack" when the
// broker has one (broker.rack).
func brokerZNode(eps []endpoint, rack string) zkmeta.BrokerZNode {
	z := zkmeta.BrokerZNode{ListenerSecurityProtocolMap: map[string]string{}, JMXPort: -1,
		Timestamp: zkmeta.NowMillisString(), Version: 5, Port: -1, Rack: rack, Features: map[string]any{}}
	for _, e := range eps {
		z.ListenerSecurityProtocolMap[e.name] = e.protocol
		z.Endpoints = append(z.Endpoints, e.name+"://"+net.JoinHostPort(e.host, strconv.Itoa(int(e.port))))
		if e.protocol == "PLAINTEXT" && z.Port == -1 {
			z.Host, z.Port = e.host, int(e.port)
		}
	}
	return z
}

// parseEndpoints reads the endpoints of a /brokers/ids znode, by listener
// name.
func parseEndpoints(z *zkmeta.BrokerZNode) map[string]hostPort {
	m := map[string]hostPort{}
	for _, s := range z.Endpoints {
		name, addr, ok := strings.Cut(s, "://")
		h, p, err := net.SplitHostPort(addr)
		port, perr := strconv.Atoi(p)
		if ok && err == nil && perr == nil {
			m[strings.ToUpper(name)] = hostPort{h, int32(port)}
		}
	}
	return m
}

// hostPort is where a listener of a broker is reached.
type hostPort struct {
	host string
	port int32
}

// at is where clients of listener reach br: that listener's endpoint (as
// Kafka answers with the endpoints of the listener the request came on),
// or its host and port when it has no such listener.
func (br brokerInfo) at(listener string) (string, int32) {
	if hp, ok := br.endpoints[listener]; ok {
		return hp.host, hp.port
	}
	return br.host, br.port
}

// firstEndpoint is where the first listener of a znode is reached.
func firstEndpoint(z *zkmeta.BrokerZNode) (hostPort, bool) {
	if len(z.Endpoints) == 0 {
		return hostPort{}, false
	}
	first := zkmeta.BrokerZNode{Endpoints: z.Endpoints[:1]}
	for _, hp := range parseEndpoints(&first) {
		return hp, true
	}
	return hostPort{}, false
}

// rackOrNil is br's rack as Metadata and DescribeCluster answer it: null
// when the broker has none.
func (br brokerInfo) rackOrNil() *string {
	if br.rack == "" {
		return nil
	}
	r := br.rack
	return &r
}
