package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A broker's controlled shutdown (Kafka's KafkaServer.controlledShutdown):
// before it stops serving, Shutdown asks the controller, on its
// inter-broker listener, to move leadership off this broker, and asks
// again after controlled.shutdown.retry.backoff.ms until no partition
// remains or controlled.shutdown.max.retries attempts are spent; then it
// shuts down anyway, as Kafka does. The phase is bounded by half of what
// is left of Shutdown's context, so that the rest of the shutdown keeps
// its time.

// controlledShutdown runs the phase; it reports whether the controller
// answered that nothing remains.
func (b *Broker) controlledShutdown(ctx context.Context) bool {
	cfg := b.cfg.InterBroker
	select {
	case <-b.registered:
	default:
		return false // never joined the cluster
	}
	if !cfg.ControlledShutdown || cfg.ControlledShutdownMaxRetries <= 0 {
		return false
	}
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(dl)/2))
		defer cancel()
	}
	start := time.Now()
	for attempt := int32(1); ; attempt++ {
		remaining, err := b.askControlledShutdown(ctx)
		if err == nil && remaining == 0 {
			b.log.Info("controlled shutdown succeeded", "attempts", attempt, "took", time.Since(start))
			return true
		}
		b.log.Warn("controlled shutdown: leadership not yet moved", "attempt", attempt, "partitions_remaining", remaining, "err", err)
		dl, ok := ctx.Deadline()
		if attempt >= cfg.ControlledShutdownMaxRetries || ok && time.Until(dl) < cfg.ControlledShutdownRetryBackoff {
			b.log.Warn("controlled shutdown failed; proceeding to an unclean shutdown", "attempts", attempt)
			return false
		}
		select {
		case <-time.After(cfg.ControlledShutdownRetryBackoff):
		case <-ctx.Done():
			return false
		}
	}
}

// askControlledShutdown sends one ControlledShutdown to the controller and
// returns how many partitions remain on this broker.
func (b *Broker) askControlledShutdown(ctx context.Context) (int, error) {
	id := b.cluster.controllerID()
	if id < 0 {
		return 0, errors.New("no controller")
	}
	b.cluster.mu.RLock()
	info, ok := b.cluster.brokers[id]
	b.cluster.mu.RUnlock()
	if !ok {
		return 0, fmt.Errorf("controller %d not registered", id)
	}
	listener := b.cfg.interBrokerListener()
	hp, ok := info.endpoints[listener]
	if !ok {
		return 0, fmt.Errorf("controller %d has no %s listener", id, listener)
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(net.JoinHostPort(hp.host, strconv.Itoa(int(hp.port)))),
		kgo.ClientID("zkafka-broker-" + strconv.Itoa(int(b.cfg.BrokerID))), kgo.DialTimeout(5 * time.Second)},
		b.interBrokerClientOpts()...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	req := kmsg.NewPtrControlledShutdownRequest()
	req.BrokerID, req.BrokerEpoch = b.cfg.BrokerID, b.epochs.broker.Load()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	kr, err := cl.SeedBrokers()[0].Request(rctx, req)
	if err != nil {
		return 0, err
	}
	resp := kr.(*kmsg.ControlledShutdownResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return len(resp.PartitionsRemaining), err
	}
	return len(resp.PartitionsRemaining), nil
}

// resignControl gives up control at shutdown: /controller is deleted (if
// still this broker's, checked with /controller_epoch's version) so that
// another broker is elected at once, rather than when the session closes.
func (b *Broker) resignControl() {
	check, _, err := b.epochCheck()
	if err != nil {
		return
	}
	b.ctrl.set(false, 0, 0)
	if err := b.zk.Multi(check, &zk.DeleteRequest{Path: "/controller", Version: -1}); err != nil {
		b.log.Warn("resigning as controller", "err", err)
		return
	}
	b.log.Info("resigned as controller")
}
