package broker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// The authentication of one SASL listener's connection, as Kafka's
// SaslServerAuthenticator and SocketServer run it:
//
//   - Before authentication only ApiVersions (once, first), SaslHandshake
//     and then the mechanism's tokens are served; frames are capped by
//     sasl.server.max.receive.size. Any other request closes the
//     connection (Kafka: InvalidRequestException); a SaslAuthenticate
//     before the handshake gets ILLEGAL_SASL_STATE and a close.
//   - SaslHandshake v1 makes the tokens SaslAuthenticate requests; v0
//     makes them raw size-prefixed frames, answered the same way, as
//     clients before KIP-152 send them.
//   - An unknown mechanism (UNSUPPORTED_SASL_MECHANISM, with the enabled
//     list) or a failed exchange (SASL_AUTHENTICATION_FAILED) is answered
//     after connection.failed.authentication.delay.ms, then the connection
//     closes; the log line names the remote address and the user, never
//     a token.
//   - Authentication must finish within saslHandshakeTimeout of the
//     connection (or of a re-authentication's handshake), else it closes.
//   - KIP-368: with connections.max.reauth.ms set, SaslAuthenticate v1+
//     answers the session's lifetime; a client that used v1+ may send
//     SaslHandshake again on its authenticated connection and go through
//     the exchange again (same mechanism, same principal). Any other
//     request after the session expired closes the connection.

// saslPhase is where a connection is in its authentication.
type saslPhase uint8

const (
	saslStart         saslPhase = iota // ApiVersions or SaslHandshake
	saslAfterVersions                  // SaslHandshake only
	saslTokens                         // SaslAuthenticate requests (SaslHandshake v1)
	saslRawTokens                      // raw token frames (SaslHandshake v0)
	saslDone                           // authenticated
)

// saslConn is the authentication state of a connection (reader goroutine
// only).
type saslConn struct {
	l         *saslListener
	phase     saslPhase
	mechanism string        // the mechanism authenticated with, or being
	mech      saslMechanism // the exchange in progress
	// reauthing: a re-authentication is in progress; badReauth is its
	// error when it asked for another mechanism (Kafka fails it at the
	// first token).
	reauthing bool
	badReauth string
	// reauthCapable: the client sent SaslAuthenticate v1+, so it knows
	// re-authentication (Kafka's connectedClientSupportsReauthentication).
	reauthCapable bool
	expires       time.Time   // the session's end (zero: none)
	watchdog      *time.Timer // closes a connection that does not finish authenticating
}

// Errors that close a SASL connection.
var (
	errSASLFailed         = errors.New("SASL authentication failed")
	errSASLSessionExpired = errors.New("the SASL session expired and the client did not re-authenticate (connections.max.reauth.ms)")
)

// startSASL makes c a SASL connection if its listener is SASL, and starts
// its authentication deadline (the reader goroutine, first thing).
func (c *conn) startSASL() {
	l := c.b.sasl[c.listener]
	if l == nil {
		return
	}
	c.sasl = &saslConn{l: l}
	c.armSASLDeadline()
}

// armSASLDeadline closes the connection if it is not authenticated within
// saslHandshakeTimeout.
func (c *conn) armSASLDeadline() {
	timeout := c.sasl.l.deadline
	c.sasl.watchdog = time.AfterFunc(timeout, func() {
		c.log.Info("closing connection: SASL authentication not finished in time", "timeout", timeout)
		c.nc.Close()
	})
}

// stopSASL stops the deadline (the connection authenticated, or closed).
func (c *conn) stopSASL() {
	if c.sasl != nil && c.sasl.watchdog != nil {
		c.sasl.watchdog.Stop()
		c.sasl.watchdog = nil
	}
}

// frameLimit is the largest request frame c reads now.
func (c *conn) frameLimit() int {
	if c.sasl != nil && c.sasl.phase != saslDone {
		return int(min(c.b.cfg.SASL.MaxReceiveSize, c.b.cfg.SocketRequestMaxBytes))
	}
	return int(c.b.cfg.SocketRequestMaxBytes)
}

// saslGate runs before dispatch on a SASL connection. handled says the
// frame was consumed (resp, possibly nil, is its answer); else it is
// dispatched as usual. An error closes the connection after resp.
func (c *conn) saslGate(frame []byte) (resp *response, handled bool, err error) {
	s := c.sasl
	if s.phase == saslRawTokens {
		return c.saslRawToken(frame)
	}
	if len(frame) < 2 {
		return nil, true, kproto.ErrShortHeader
	}
	key := int16(binary.BigEndian.Uint16(frame))
	if s.phase == saslDone {
		switch {
		case key == kproto.KeySaslHandshake && s.reauthCapable:
			// KIP-368 re-authentication, allowed after the expiry too.
			s.phase, s.reauthing, s.badReauth = saslStart, true, ""
			c.armSASLDeadline()
		case !s.expires.IsZero() && !c.b.now().Before(s.expires):
			return nil, true, errSASLSessionExpired
		default:
			return nil, false, nil
		}
	}
	hdr, body, err := kproto.ParseRequestHeader(frame, nil)
	if err != nil {
		return nil, true, err
	}
	switch {
	case key == kproto.KeyApiVersions && s.phase == saslStart && !s.reauthing:
		s.phase = saslAfterVersions
		return nil, false, nil
	case key == kproto.KeySaslHandshake && (s.phase == saslStart || s.phase == saslAfterVersions):
		return c.saslHandshake(&hdr, body)
	case key == kproto.KeySaslAuthenticate && s.phase == saslTokens:
		return c.saslAuthenticate(&hdr, body)
	case key == kproto.KeySaslAuthenticate:
		return c.saslIllegalAuthenticate(&hdr)
	case s.phase == saslTokens:
		return nil, true, fmt.Errorf("unexpected %s request during SASL authentication", kmsg.NameForKey(key))
	}
	return nil, true, fmt.Errorf("unexpected %s request before SASL authentication (only ApiVersions, SaslHandshake and SaslAuthenticate are served)", kmsg.NameForKey(key))
}

// saslHandshake chooses the mechanism.
func (c *conn) saslHandshake(hdr *kproto.RequestHeader, body []byte) (*response, bool, error) {
	s := c.sasl
	kr, err := decodeSASLRequest(hdr, body, 1)
	if err != nil {
		return nil, true, err
	}
	req := kr.(*kmsg.SASLHandshakeRequest)
	resp := kmsg.NewPtrSASLHandshakeResponse()
	resp.SupportedMechanisms = s.l.mechanisms
	if !slices.Contains(s.l.mechanisms, req.Mechanism) {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		c.saslFailed("unsupported SASL mechanism", "", "mechanism", clip(req.Mechanism))
		return kmsgFrame(hdr, resp), true, errSASLFailed
	}
	if s.reauthing && req.Mechanism != s.mechanism {
		s.badReauth = fmt.Sprintf("SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'", req.Mechanism, s.mechanism)
	}
	if !s.reauthing {
		s.mechanism = req.Mechanism
	}
	if s.mech, err = c.b.newMechanism(req.Mechanism, s.l); err != nil {
		return nil, true, err
	}
	s.phase = saslTokens
	if hdr.APIVersion == 0 {
		s.phase = saslRawTokens
	}
	return kmsgFrame(hdr, resp), true, nil
}

// saslAuthenticate takes one token of the exchange.
func (c *conn) saslAuthenticate(hdr *kproto.RequestHeader, body []byte) (*response, bool, error) {
	s := c.sasl
	kr, err := decodeSASLRequest(hdr, body, 2)
	if err != nil {
		return nil, true, err
	}
	req := kr.(*kmsg.SASLAuthenticateRequest)
	if hdr.APIVersion > 0 {
		s.reauthCapable = true
	}
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	challenge, user, err := c.saslStep(req.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := err.Error()
		resp.ErrorMessage = &msg
		return kmsgFrame(hdr, resp), true, errSASLFailed
	}
	resp.SASLAuthBytes = challenge
	if user != "" {
		resp.SessionLifetimeMillis = c.saslComplete(user).Milliseconds()
	}
	return kmsgFrame(hdr, resp), true, nil
}

// saslRawToken takes one token sent without a Kafka header (after a v0
// SaslHandshake) and answers the server's token the same way. A failure
// closes without an answer, as Kafka.
func (c *conn) saslRawToken(frame []byte) (*response, bool, error) {
	challenge, user, err := c.saslStep(frame)
	if err != nil {
		return nil, true, errSASLFailed
	}
	resp := newResponse()
	resp.buf = append(binary.BigEndian.AppendUint32(resp.buf[:0], uint32(len(challenge))), challenge...)
	if user != "" {
		c.saslComplete(user)
	}
	return resp, true, nil
}

// saslStep runs one step of the exchange; user is set when it completed.
// A failure is logged and waited for (saslFailed).
func (c *conn) saslStep(token []byte) (challenge []byte, user string, err error) {
	s := c.sasl
	if s.badReauth != "" {
		c.saslFailed("SASL re-authentication with another mechanism", c.principal())
		return nil, "", errors.New(s.badReauth)
	}
	challenge, done, err := s.mech.step(token)
	if err != nil {
		args := []any{"mechanism", s.mechanism, "reason", err}
		if cause := errors.Unwrap(err); cause != nil {
			args = append(args, "detail", cause)
		}
		c.saslFailed("SASL authentication failed", s.mech.user(), args...)
		return nil, "", err
	}
	if !done {
		return challenge, "", nil
	}
	user = s.mech.user()
	if s.reauthing && "User:"+user != c.principal() {
		err = fmt.Errorf("Cannot change principals during re-authentication from %s: User:%s", c.principal(), user)
		c.saslFailed("SASL re-authentication as another user", user)
		return nil, "", err
	}
	return challenge, user, nil
}

// saslComplete makes the connection authenticated as user and returns
// the session's lifetime (0: none).
func (c *conn) saslComplete(user string) time.Duration {
	s := c.sasl
	c.stopSASL()
	lifetime := s.l.reauth[s.mechanism]
	s.expires = time.Time{}
	if lifetime > 0 {
		s.expires = c.b.now().Add(lifetime)
	}
	if s.reauthing {
		c.log.Info("SASL re-authenticated", "principal", c.principal(), "mechanism", s.mechanism)
	} else {
		c.setPrincipal(user)
		c.log.Debug("SASL authenticated", "principal", c.principal(), "mechanism", s.mechanism)
	}
	s.phase, s.reauthing, s.mech = saslDone, false, nil
	return lifetime
}

// saslIllegalAuthenticate answers a SaslAuthenticate that came before the
// handshake with ILLEGAL_SASL_STATE, and closes.
func (c *conn) saslIllegalAuthenticate(hdr *kproto.RequestHeader) (*response, bool, error) {
	err := errors.New("SaslAuthenticate before SaslHandshake")
	if hdr.APIVersion < 0 || hdr.APIVersion > 2 {
		return nil, true, err
	}
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.ErrorCode = kerr.IllegalSaslState.Code
	msg := "Unexpected Kafka request of type SASL_AUTHENTICATE during SASL handshake."
	resp.ErrorMessage = &msg
	return kmsgFrame(hdr, resp), true, err
}

// saslFailed logs a failed authentication (the remote address is on
// c.log; user is who the client claimed to be, if known) and waits
// connection.failed.authentication.delay.ms, so that guessing passwords
// costs the client at least as much time as the broker.
func (c *conn) saslFailed(msg, user string, args ...any) {
	if user != "" {
		args = append(args, "user", clip(user))
	}
	c.log.Info(msg+"; closing the connection", args...)
	if d := c.b.cfg.SASL.FailedAuthDelay; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.b.done:
		}
	}
}

// decodeSASLRequest decodes a SaslHandshake or SaslAuthenticate body; a
// version above maxV or a body that does not decode closes the connection.
func decodeSASLRequest(hdr *kproto.RequestHeader, body []byte, maxV int16) (kmsg.Request, error) {
	if hdr.APIVersion < 0 || hdr.APIVersion > maxV {
		return nil, fmt.Errorf("unsupported version %d of %s (serving 0-%d)", hdr.APIVersion, kmsg.NameForKey(hdr.APIKey), maxV)
	}
	return kproto.DecodeKmsg(hdr.APIKey, hdr.APIVersion, body)
}

// kmsgFrame is the response frame of resp at hdr's version.
func kmsgFrame(hdr *kproto.RequestHeader, resp kmsg.Response) *response {
	resp.SetVersion(hdr.APIVersion)
	r := newResponse()
	r.buf = kproto.AppendKmsgResponseFrame(r.buf[:0], hdr.CorrelationID, resp)
	return r
}

// clip shortens a client-given string for a log line.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// authenticate runs saslGate on the reader goroutine and queues its
// answer. handled: the frame was consumed; !ok: the connection closes
// (after the answer).
func (c *conn) authenticate(frame []byte) (handled, ok bool) {
	resp, handled, err := c.saslGate(frame)
	if resp != nil && !c.send(resp, true) {
		return true, false
	}
	if err != nil {
		if !errors.Is(err, errSASLFailed) { // saslFailed logged those
			c.log.Info("closing connection", "principal", c.principal(), "err", err)
		}
		return true, false
	}
	return handled, true
}
