package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// SaslAuthenticate (36), versions 0-2 (v1 adds session_lifetime_ms, v2 is
// flexible). The tokens of an authentication are taken before dispatch
// (sasl_conn.go); what reaches this handler is a SaslAuthenticate where
// none is expected (a PLAINTEXT or SSL listener, an authenticated
// connection), answered ILLEGAL_SASL_STATE as Kafka's KafkaApis does.

func init() {
	regKey(kproto.KeySaslAuthenticate, 0, 2, kmsgHandler(func(c *conn, req *kmsg.SASLAuthenticateRequest) (kmsg.Response, error) {
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = kerr.IllegalSaslState.Code
		msg := "SaslAuthenticate request received after successful authentication"
		resp.ErrorMessage = &msg
		return resp, nil
	}))
}
