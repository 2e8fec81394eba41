package controller

import (
	"encoding/json"
	"net"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/broker/zkmeta"
)

// BrokerInfo is a live broker as the controller read it from
// /brokers/ids/{id}: its epoch and where its listeners are.
type BrokerInfo struct {
	// Epoch is the czxid of /brokers/ids/{id} (KIP-380's broker epoch).
	Epoch     int64
	Endpoints []Endpoint
	// Rack is the broker's rack ("" for none), sent on in UpdateMetadata.
	Rack string
}

// Endpoint is one listener of a broker.
type Endpoint struct {
	Listener string // upper-case listener name
	Protocol string // its security protocol: PLAINTEXT, SSL, ...
	Host     string
	Port     int32
}

// Endpoint returns the broker's endpoint on listener.
func (b BrokerInfo) Endpoint(listener string) (Endpoint, bool) {
	for _, e := range b.Endpoints {
		if e.Listener == listener {
			return e, true
		}
	}
	return Endpoint{}, false
}

// ParseBrokerZNode reads a /brokers/ids/{id} znode (version 4 or 5:
// "NAME://host:port" endpoints and the listener's protocol map).
func ParseBrokerZNode(data []byte, epoch int64) (BrokerInfo, error) {
	var z zkmeta.BrokerZNode
	if err := json.Unmarshal(data, &z); err != nil {
		return BrokerInfo{}, err
	}
	info := BrokerInfo{Epoch: epoch, Rack: z.Rack}
	for _, s := range z.Endpoints {
		name, addr, ok := strings.Cut(s, "://")
		h, p, err := net.SplitHostPort(addr)
		port, perr := strconv.Atoi(p)
		if !ok || err != nil || perr != nil {
			continue
		}
		name = strings.ToUpper(name)
		proto := z.ListenerSecurityProtocolMap[name]
		if proto == "" {
			proto = name
		}
		info.Endpoints = append(info.Endpoints, Endpoint{Listener: name, Protocol: proto, Host: h, Port: int32(port)})
	}
	return info, nil
}

// securityProtocolID is Kafka's id of a security protocol, as
// UpdateMetadata carries it (SecurityProtocol.java).
func securityProtocolID(name string) int16 {
	switch name {
	case "SSL":
		return 1
	case "SASL_PLAINTEXT":
		return 2
	case "SASL_SSL":
		return 3
	}
	return 0
}

func epochsOf(brokers map[int32]BrokerInfo) map[int32]int64 {
	out := make(map[int32]int64, len(brokers))
	for id, b := range brokers {
		out[id] = b.Epoch
	}
	return out
}
