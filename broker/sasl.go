package broker

import (
	"fmt"
	"slices"
	"time"
)

// The SASL listeners (SASL_PLAINTEXT, SASL_SSL), as Kafka's
// SaslServerAuthenticator serves them. A connection of such a listener is
// served nothing but ApiVersions, SaslHandshake and SaslAuthenticate until
// it has authenticated (sasl_conn.go, the state machine); then it is
// served as any other, as its principal "User:NAME" (principal.go).
//
//	connect ─► [ApiVersions] ─► SaslHandshake v1 ─► SaslAuthenticate* ─► authenticated
//	                            SaslHandshake v0 ─► raw tokens*  ─────┘     │ (KIP-368, SaslAuthenticate v1+ clients)
//	                                                  SaslHandshake ◄───────┘ re-authentication
//
// The mechanisms: PLAIN (sasl_plain.go, users from the JAAS config) and
// SCRAM-SHA-256 / SCRAM-SHA-512 (sasl_scram.go, github.com/xdg-go/scram's
// server, credentials from ZooKeeper through scram_store.go).

// saslListener is what one SASL listener offers.
type saslListener struct {
	name       string
	mechanisms []string
	plainUsers map[string]string        // PLAIN: user → password
	reauth     map[string]time.Duration // session lifetime by mechanism (0: none)
	// deadline bounds an authentication (saslHandshakeTimeout).
	deadline time.Duration
}

// saslHandshakeTimeout bounds an authentication: a client that connects
// to a SASL listener and has not authenticated by then (or does not
// finish a re-authentication) is closed.
const saslHandshakeTimeout = 10 * time.Second

// initSASL builds b.sasl, one saslListener for each SASL listener.
func (b *Broker) initSASL() error {
	ls, err := b.cfg.listenerEntries(b.cfg.Listeners)
	if err != nil {
		return err
	}
	for _, e := range ls {
		if !isSASLProtocol(e.protocol) {
			continue
		}
		if err := b.cfg.checkSASLListener(e.name); err != nil {
			return err
		}
		l := &saslListener{name: e.name, mechanisms: slices.Clone(b.cfg.SASL.mechanismsOf(e.name)),
			reauth: map[string]time.Duration{}, deadline: saslHandshakeTimeout}
		for _, m := range l.mechanisms {
			l.reauth[m] = b.cfg.SASL.reauthOf(e.name, m)
		}
		if slices.Contains(l.mechanisms, "PLAIN") {
			if l.plainUsers, err = b.cfg.SASL.plainUsers(e.name); err != nil {
				return err
			}
		}
		if b.sasl == nil {
			b.sasl = map[string]*saslListener{}
		}
		b.sasl[e.name] = l
	}
	return nil
}

// newMechanism starts the server side of mechanism's exchange.
func (b *Broker) newMechanism(mech string, l *saslListener) (saslMechanism, error) {
	switch mech {
	case "PLAIN":
		return &plainServer{users: l.plainUsers}, nil
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		return b.scram.newServer(mech)
	}
	return nil, fmt.Errorf("no SASL mechanism %s", mech)
}

// saslMechanism is the server side of one SASL exchange.
type saslMechanism interface {
	// step takes the client's next token and returns the server's;
	// done says the exchange is complete and the client authenticated.
	// An error is a failed authentication: its text is what the client
	// is told (never a secret, nor whether a user exists).
	step(token []byte) (challenge []byte, done bool, err error)
	// user is the authenticated user, once done.
	user() string
}
