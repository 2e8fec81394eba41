package broker

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kproto"
)

// RequestHook sees every request of every connection before its handler
// (Config.RequestHook), on the goroutine handling the connection's
// requests one at a time (its reader, or for a large produce request the
// handler goroutine, conn_pipeline.go): it is how a
// test harness (package zkafkatest) injects errors, delays and dropped
// connections, as kfake's ControlKey does. nil, the default, costs one nil
// check per request. It must be safe for concurrent use (connections call
// it in parallel) and must not keep info.Body past its return.
type RequestHook func(info RequestInfo) RequestAction

// RequestInfo is the request a RequestHook sees.
type RequestInfo struct {
	Broker     int32 // broker.id of the broker that received it
	Key        int16 // Kafka API key
	Version    int16
	ClientID   string
	Correlated int32  // correlation id
	Body       []byte // the request body after the header; valid during the call
}

// RequestAction is what the broker does with a hooked request. The zero
// value lets it through. Delay applies first (the connection handles
// nothing else meanwhile, as a slow broker would, and reads at most one
// request ahead); then Drop closes the connection
// unanswered, or Response answers in place of the handler (the request has
// no effect), encoded at the request's version.
type RequestAction struct {
	Delay    time.Duration
	Drop     bool
	Response kmsg.Response
}

// errDroppedByHook closes a connection whose request a RequestHook dropped.
var errDroppedByHook = errors.New("dropped by the request hook")

// hooked runs the request hook, if any. handled reports that the request
// is answered (resp) or its connection must close (err).
func (c *conn) hooked(hdr *kproto.RequestHeader, body []byte) (resp *response, handled bool, err error) {
	hook := c.b.cfg.RequestHook
	if hook == nil {
		return nil, false, nil
	}
	act := hook(RequestInfo{Broker: c.b.cfg.BrokerID, Key: hdr.APIKey, Version: hdr.APIVersion,
		ClientID: string(hdr.ClientID), Correlated: hdr.CorrelationID, Body: body})
	if act.Delay > 0 && !c.b.sleep(act.Delay) {
		return nil, true, ErrServerClosed
	}
	switch {
	case act.Drop:
		return nil, true, errDroppedByHook
	case act.Response != nil:
		act.Response.SetVersion(hdr.APIVersion)
		resp := newResponse()
		resp.buf = kproto.AppendKmsgResponseFrame(resp.buf[:0], hdr.CorrelationID, act.Response)
		return resp, true, nil
	}
	return nil, false, nil
}
