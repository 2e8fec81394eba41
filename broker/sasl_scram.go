package broker

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"

	"github.com/xdg-go/scram"
)

// SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's
// ScramSaslServer: the exchange is github.com/xdg-go/scram's server
// conversation, the credentials those of /config/users (scram_store.go).
// Kafka's client-first extensions (tokenauth, delegation tokens) are not
// offered.

// scramMechanisms are the SCRAM mechanisms by name, with Kafka's
// ScramMechanism type (AlterUserScramCredentials' mechanism int8) and
// minimum iterations.
var scramMechanisms = map[string]struct {
	typ     int8
	hash    scram.HashGeneratorFcn
	newHash func() hash.Hash
}{
	"SCRAM-SHA-256": {1, scram.SHA256, sha256.New},
	"SCRAM-SHA-512": {2, scram.SHA512, sha512.New},
}

// Kafka's ScramMechanism bounds on iterations.
const (
	scramMinIterations = 4096
	scramMaxIterations = 16384
)

// scramMechanismName is the name of Kafka's mechanism type t ("" if none).
func scramMechanismName(t int8) string {
	for name, m := range scramMechanisms {
		if m.typ == t {
			return name
		}
	}
	return ""
}

// scramServer is one SCRAM exchange.
type scramServer struct {
	mech string
	conv *scram.ServerConversation
}

func (st *scramStore) newServer(mech string) (saslMechanism, error) {
	m, ok := scramMechanisms[mech]
	if !ok {
		return nil, fmt.Errorf("no SCRAM mechanism %s", mech)
	}
	srv, err := m.hash.NewServer(func(user string) (scram.StoredCredentials, error) {
		c, ok := st.lookup(user, mech)
		if !ok {
			return scram.StoredCredentials{}, errors.New("unknown user")
		}
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	return &scramServer{mech: mech, conv: srv.NewConversation()}, nil
}

func (s *scramServer) step(token []byte) ([]byte, bool, error) {
	out, err := s.conv.Step(string(token))
	if err != nil {
		// As Kafka, the client is not told why (a user that does not
		// exist and a wrong password look the same).
		return nil, false, fmt.Errorf("Authentication failed during authentication due to invalid credentials with SASL mechanism %s", s.mech)
	}
	if !s.conv.Done() {
		return []byte(out), false, nil
	}
	if !s.conv.Valid() {
		return nil, false, fmt.Errorf("Authentication failed during authentication due to invalid credentials with SASL mechanism %s", s.mech)
	}
	if z := s.conv.AuthzID(); z != "" && z != s.conv.Username() {
		return nil, false, errors.New("Authentication failed: Client requested an authorization id that is different from username")
	}
	return []byte(out), true, nil
}

func (s *scramServer) user() string { return s.conv.Username() }

// scramCredential derives what a server stores from a salted password, as
// Kafka's ScramFormatter does for AlterUserScramCredentials (the client
// sends SaltedPassword = Hi(password, salt, i)): StoredKey =
// H(HMAC(SaltedPassword, "Client Key")), ServerKey = HMAC(SaltedPassword,
// "Server Key") (RFC 5802 section 3), with the standard library's HMAC.
func scramCredential(mech string, salt, saltedPassword []byte, iterations int) scram.StoredCredentials {
	newHash := scramMechanisms[mech].newHash
	mac := func(data string) []byte {
		h := hmac.New(newHash, saltedPassword)
		h.Write([]byte(data))
		return h.Sum(nil)
	}
	stored := newHash()
	stored.Write(mac("Client Key"))
	return scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(salt), Iters: iterations},
		StoredKey: stored.Sum(nil), ServerKey: mac("Server Key")}
}
