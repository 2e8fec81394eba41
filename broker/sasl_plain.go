package broker

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
)

// plainServer is SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer: one
// token, authzid NUL authcid NUL password, checked against the
// user_NAME="password" options of the listener's PlainLoginModule.
type plainServer struct {
	users map[string]string
	name  string // the user the client named
}

var errPlainCredentials = errors.New("Authentication failed: Invalid username or password")

func (s *plainServer) step(token []byte) ([]byte, bool, error) {
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 {
		return nil, false, fmt.Errorf("Invalid SASL/PLAIN response: expected 3 tokens, got %d", len(parts))
	}
	authz, user, pass := string(parts[0]), string(parts[1]), parts[2]
	s.name = user // who the client claims to be, for the log line of a failure
	switch {
	case user == "":
		return nil, false, errors.New("Authentication failed: username not specified")
	case len(pass) == 0:
		return nil, false, errors.New("Authentication failed: password not specified")
	}
	want, ok := s.users[user]
	// Compare in constant time, and as long for an unknown user.
	if subtle.ConstantTimeCompare(pass, []byte(want)) != 1 || !ok {
		return nil, false, errPlainCredentials
	}
	if authz != "" && authz != user {
		return nil, false, errors.New("Authentication failed: Client requested an authorization id that is different from username")
	}
	return []byte{}, true, nil
}

func (s *plainServer) user() string { return s.name }
