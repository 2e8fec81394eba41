package controller

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ChannelManager is the Channels of a running controller (Kafka's
// ControllerChannelManager): one queue per live broker, each drained by
// its own sender goroutine (Kafka's RequestSendThread) that has one
// request in flight, reaches the broker on the inter-broker listener
// through a franz-go client seeded with that one address, and retries a
// request that got no answer (reconnecting, every RetryBackoff) until it
// is answered or the queue is dropped. Answers are logged when they carry
// an error; nothing waits for them.
type ChannelManager struct {
	// Listener is the inter-broker listener's name; ClientOpts are added
	// to every broker's client (TLS for an SSL or SASL_SSL listener, the
	// SASL login for a SASL one).
	Listener   string
	ClientOpts []kgo.Opt
	// Go starts a tracked goroutine (false once the broker shuts down).
	Go   func(name string, fn func()) bool
	Done <-chan struct{}
	Log  *slog.Logger
	// RetryBackoff is the pause before a failed request is sent again
	// (100 ms when zero).
	RetryBackoff time.Duration
	// Answered, if set, is given every answer (on the broker's sender
	// goroutine): StopReplica answers complete topic deletions.
	Answered func(to int32, resp kmsg.Response)

	mu     sync.Mutex
	queues map[int32]*brokerQueue // by broker id
	// base is canceled when Done closes: every queue's context derives
	// from it, so that Shutdown does not wait for a request in flight.
	base context.Context
}

// brokerQueue is one broker's queue.
type brokerQueue struct {
	id   int32
	info BrokerInfo
	mu   sync.Mutex
	// pending are the requests not yet answered; pending[0] is in flight.
	pending []kmsg.Request
	wake    chan struct{} // a request was queued (capacity 1)
	ctx     context.Context
	cancel  context.CancelFunc // drops the queue
}

// SetBrokers implements Channels.
func (m *ChannelManager) SetBrokers(brokers map[int32]BrokerInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.queues == nil {
		m.queues = map[int32]*brokerQueue{}
		var cancel context.CancelFunc
		m.base, cancel = context.WithCancel(context.Background())
		if !m.Go("controller-channels", func() { <-m.Done; cancel() }) {
			cancel()
		}
	}
	for id, q := range m.queues {
		if b, ok := brokers[id]; !ok || b.Epoch != q.info.Epoch {
			q.cancel()
			delete(m.queues, id)
		}
	}
	for id, b := range brokers {
		if _, ok := m.queues[id]; ok {
			continue
		}
		ctx, cancel := context.WithCancel(m.base)
		q := &brokerQueue{id: id, info: b, wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel}
		if !m.Go("controller-send-"+strconv.Itoa(int(id)), func() { m.run(q) }) {
			cancel()
			continue
		}
		m.queues[id] = q
	}
}

// Enqueue implements Channels.
func (m *ChannelManager) Enqueue(to int32, req kmsg.Request) {
	m.mu.Lock()
	q := m.queues[to]
	m.mu.Unlock()
	if q == nil {
		return
	}
	q.mu.Lock()
	q.pending = append(q.pending, req)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run is a queue's sender goroutine.
func (m *ChannelManager) run(q *brokerQueue) {
	defer q.cancel()
	ep, ok := q.info.Endpoint(m.Listener)
	if !ok {
		m.Log.Warn("controller: broker has no inter-broker listener; its requests are dropped", "broker", q.id, "listener", m.Listener)
		return
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))),
		kgo.ClientID("zkafka-controller"), kgo.DialTimeout(5 * time.Second)}, m.ClientOpts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		m.Log.Warn("controller: client for broker", "broker", q.id, "err", err)
		return
	}
	defer cl.Close()
	backoff := m.RetryBackoff
	if backoff <= 0 {
		backoff = 100 * time.Millisecond
	}
	authFailed := false // logged once until a request gets through
	for {
		req, ok := q.next()
		if !ok {
			return
		}
		for {
			ctx, cancel := context.WithTimeout(q.ctx, 30*time.Second)
			resp, err := cl.SeedBrokers()[0].Request(ctx, req)
			cancel()
			if err == nil {
				authFailed = false
				m.logAnswer(q.id, resp)
				if m.Answered != nil {
					m.Answered(q.id, resp)
				}
				break
			}
			if q.ctx.Err() != nil {
				return
			}
			if isAuthError(err) && !authFailed {
				authFailed = true
				m.Log.Warn("controller: authentication to the broker failed (sasl.mechanism.inter.broker.protocol and the listener's JAAS login); retrying", "broker", q.id, "err", err)
			}
			m.Log.Debug("controller: request failed; retrying", "broker", q.id, "request", kmsg.NameForKey(req.Key()), "err", err)
			select {
			case <-time.After(backoff):
			case <-q.ctx.Done():
				return
			}
		}
		q.mu.Lock()
		q.pending = q.pending[1:]
		q.mu.Unlock()
	}
}

// isAuthError: err is the broker refusing this client's SASL login (its
// message, the server's, names no secret).
func isAuthError(err error) bool {
	return errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.UnsupportedSaslMechanism) ||
		errors.Is(err, kerr.IllegalSaslState)
}

// next waits for the queue's first request (false when the queue was
// dropped or the broker shuts down).
func (q *brokerQueue) next() (kmsg.Request, bool) {
	for {
		q.mu.Lock()
		if len(q.pending) > 0 {
			req := q.pending[0]
			q.mu.Unlock()
			return req, true
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-q.ctx.Done():
			return nil, false
		}
	}
}

// logAnswer logs a response's request-level error.
func (m *ChannelManager) logAnswer(to int32, resp kmsg.Response) {
	var code int16
	switch r := resp.(type) {
	case *kmsg.LeaderAndISRResponse:
		code = r.ErrorCode
	case *kmsg.UpdateMetadataResponse:
		code = r.ErrorCode
	case *kmsg.StopReplicaResponse:
		code = r.ErrorCode
	}
	if code != 0 {
		m.Log.Warn("controller: request refused", "broker", to, "request", kmsg.NameForKey(resp.Key()), "err", kerr.ErrorForCode(code))
	}
}
