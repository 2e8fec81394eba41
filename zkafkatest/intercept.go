package zkafkatest

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/quorum"
	"github.com/zkafka/zkafka/zkproto"
)

// KafkaRule intercepts requests to the brokers. Its zero value matches
// every request and lets it through.
//
// Ordering: the rules of a cluster are tried in the order they were added;
// the first one that matches a request acts on it, alone (a later rule
// never sees a request an earlier one took), and uses up one of its Count.
// A rule whose Count is used up is removed; Count 0 is persistent until
// Remove. So a one-shot error ahead of a persistent delay fails the first
// matching request and delays the following ones, whatever the
// connections' interleaving. A rule acts before the request's handler: a
// request answered with an error or dropped has no effect on the broker.
// On a connection, requests are read one at a time: a delayed request
// holds back the ones behind it, as a slow broker does.
type KafkaRule struct {
	Keys    []int16 // API keys to match (kmsg.Produce.Int16(), ...); empty: any
	Brokers []int32 // broker ids to match; empty: any
	Count   int     // requests to act on, then the rule goes; 0: until Remove

	Delay time.Duration // wait this long first (then go on to the handler unless told otherwise)
	Drop  bool          // close the connection without answering
	// ErrorCode answers with this Kafka error code in every error code
	// field of the response (partitions, topics, the top level), whose
	// topics and partitions mirror the request's (see ErrorResponse).
	ErrorCode int16
	// Respond, if set (and ErrorCode is 0), answers with what it returns;
	// nil lets the request through. It is called with the decoded request.
	//
	// A produce with acks=0 gets no response: ErrorCode closes its
	// connection instead (as Kafka does when one fails) and Respond is not
	// called.
	Respond func(kmsg.Request) kmsg.Response
}

// ZooKeeperRule intercepts requests of established ZooKeeper sessions
// (pings included; not the connect handshake). Ordering and Count are as
// for KafkaRule.
type ZooKeeperRule struct {
	Ops      []int32 // opcodes to match (zkproto.OpCreate, ...); empty: any
	Servers  []int32 // server myids to match (1 standalone); empty: any
	Sessions []int64 // session ids to match; empty: any
	Count    int

	Delay time.Duration
	Drop  bool
	// ErrorCode answers with this ZooKeeper error code (-101 NoNode, ...)
	// in place of executing the request.
	ErrorCode int32
}

// Hook is an added rule.
type Hook struct {
	h    *hooks
	hits atomic.Int64
	left atomic.Int64 // requests still to act on; <0: persistent
}

// Hits is how many requests the rule acted on.
func (k *Hook) Hits() int { return int(k.hits.Load()) }

// Remove removes the rule (a no-op once it is gone).
func (k *Hook) Remove() { k.h.remove(k) }

// take uses up one of the rule's count; false if none is left.
func (k *Hook) take() bool {
	for {
		n := k.left.Load()
		if n == 0 {
			return false
		}
		if n < 0 || k.left.CompareAndSwap(n, n-1) {
			k.hits.Add(1)
			return true
		}
	}
}

type kafkaHook struct {
	rule KafkaRule
	hook *Hook
}

type zkHook struct {
	rule ZooKeeperRule
	hook *Hook
}

// hooks holds a cluster's rules; the brokers' and ZooKeeper servers'
// RequestHook is its kafka and zooKeeper.
type hooks struct {
	mu         sync.Mutex
	kafkaRules atomic.Pointer[[]kafkaHook] // copy-on-write: the request path takes no lock
	zkRules    atomic.Pointer[[]zkHook]
	// harnessSession is the cluster's own ZooKeeper session, which no
	// rule sees.
	harnessSession atomic.Int64
}

func (h *hooks) init() {
	h.kafkaRules.Store(&[]kafkaHook{})
	h.zkRules.Store(&[]zkHook{})
}

func newHook(h *hooks, count int) *Hook {
	k := &Hook{h: h}
	k.left.Store(-1)
	if count > 0 {
		k.left.Store(int64(count))
	}
	return k
}

// InterceptKafka adds a rule for the brokers' requests.
func (c *Cluster) InterceptKafka(r KafkaRule) *Hook {
	h := &c.hooks
	k := newHook(h, r.Count)
	h.mu.Lock()
	rules := append(slices.Clone(*h.kafkaRules.Load()), kafkaHook{rule: r, hook: k})
	h.kafkaRules.Store(&rules)
	h.mu.Unlock()
	return k
}

// InterceptZooKeeper adds a rule for the ZooKeeper servers' requests.
func (c *Cluster) InterceptZooKeeper(r ZooKeeperRule) *Hook {
	h := &c.hooks
	k := newHook(h, r.Count)
	h.mu.Lock()
	rules := append(slices.Clone(*h.zkRules.Load()), zkHook{rule: r, hook: k})
	h.zkRules.Store(&rules)
	h.mu.Unlock()
	return k
}

// ClearIntercepts removes every rule.
func (c *Cluster) ClearIntercepts() { c.hooks.clear() }

func (h *hooks) clear() {
	h.mu.Lock()
	h.kafkaRules.Store(&[]kafkaHook{})
	h.zkRules.Store(&[]zkHook{})
	h.mu.Unlock()
}

func (h *hooks) remove(k *Hook) {
	h.mu.Lock()
	defer h.mu.Unlock()
	kr := slices.DeleteFunc(slices.Clone(*h.kafkaRules.Load()), func(r kafkaHook) bool { return r.hook == k })
	h.kafkaRules.Store(&kr)
	zr := slices.DeleteFunc(slices.Clone(*h.zkRules.Load()), func(r zkHook) bool { return r.hook == k })
	h.zkRules.Store(&zr)
}

// kafka is the brokers' broker.RequestHook.
func (h *hooks) kafka(info broker.RequestInfo) broker.RequestAction {
	rules := *h.kafkaRules.Load()
	if len(rules) == 0 || info.ClientID == harnessClientID {
		return broker.RequestAction{}
	}
	for _, r := range rules {
		if !matches(r.rule.Keys, info.Key) || !matches(r.rule.Brokers, info.Broker) || !r.hook.take() {
			continue
		}
		if r.hook.left.Load() == 0 {
			h.remove(r.hook)
		}
		return kafkaAction(r.rule, info)
	}
	return broker.RequestAction{}
}

func kafkaAction(r KafkaRule, info broker.RequestInfo) broker.RequestAction {
	act := broker.RequestAction{Delay: r.Delay, Drop: r.Drop}
	if r.Drop || (r.ErrorCode == 0 && r.Respond == nil) {
		return act
	}
	req, err := kproto.DecodeKmsg(info.Key, info.Version, info.Body)
	if err != nil {
		return act // the handler refuses it as it would
	}
	if p, ok := req.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
		// No response is read for acks=0: Kafka closes the connection
		// of an acks=0 produce that failed, and so does the rule.
		act.Drop = r.ErrorCode != 0
		return act
	}
	if r.ErrorCode != 0 {
		act.Response = ErrorResponse(req, r.ErrorCode)
	} else {
		act.Response = r.Respond(req)
	}
	return act
}

// zooKeeper is the ZooKeeper servers' quorum.RequestHook.
func (h *hooks) zooKeeper(info quorum.RequestInfo) quorum.RequestAction {
	rules := *h.zkRules.Load()
	if len(rules) == 0 || info.Session == h.harnessSession.Load() {
		return quorum.RequestAction{}
	}
	server := int32(info.Server)
	if server == 0 {
		server = 1
	}
	for _, r := range rules {
		if !matches(r.rule.Ops, int32(info.Op)) || !matches(r.rule.Servers, server) ||
			!matches(r.rule.Sessions, info.Session) || !r.hook.take() {
			continue
		}
		if r.hook.left.Load() == 0 {
			h.remove(r.hook)
		}
		return quorum.RequestAction{Delay: r.rule.Delay, Drop: r.rule.Drop, Err: zkproto.Err(r.rule.ErrorCode)}
	}
	return quorum.RequestAction{}
}

// harnessClientID is the client.id of the cluster's own Kafka clients,
// whose requests no rule sees.
const harnessClientID = "zkafkatest-harness"

func matches[T comparable](set []T, v T) bool { return len(set) == 0 || slices.Contains(set, v) }
