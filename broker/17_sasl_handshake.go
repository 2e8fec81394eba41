package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// SaslHandshake (17), versions 0-1. On a SASL listener's connection the
// handshake is taken by the authentication before dispatch
// (sasl_conn.go), and so is a re-authentication's. What reaches this
// handler is a handshake where none is expected — on a PLAINTEXT or SSL
// listener, or again on an authenticated connection of a client that
// cannot re-authenticate — and it gets ILLEGAL_SASL_STATE, as from
// Kafka's KafkaApis.

func init() {
	regKey(kproto.KeySaslHandshake, 0, 1, kmsgHandler(func(c *conn, req *kmsg.SASLHandshakeRequest) (kmsg.Response, error) {
		resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp, nil
	}))
}
