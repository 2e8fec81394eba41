package digestmd5

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
)

// Error is a refused exchange. User is the user name the client gave (""
// before one was read); Reason says why, and never holds a secret.
type Error struct {
	User   string
	Reason string
}

func (e *Error) Error() string { return "DIGEST-MD5: " + e.Reason }

type serverState int

const (
	awaitingStart    serverState = iota // the client's empty first token
	awaitingResponse                    // the challenge is out
	complete                            // the response checked out
	failed                              // any error: the exchange is over
)

// Server is the server side of one DIGEST-MD5 exchange. It is not safe
// for concurrent use (one connection's reader runs it).
type Server struct {
	// Service and Host make the digest-uri the client must give
	// (Service/Host); Host is also the realm offered. ZooKeeper's are
	// "zookeeper" and "zk-sasl-md5".
	Service, Host string
	// Password finds a user's password.
	Password func(user string) (string, bool)
	// Nonce makes the challenge's nonce; nil: 30 random bytes in base64,
	// as Java's server.
	Nonce func() string

	state serverState
	nonce string
	user  string
}

// Complete reports whether the client is authenticated.
func (s *Server) Complete() bool { return s.state == complete }

// User is the authenticated user name (the client's username; an authzid
// it gives is checked in the digest but does not change the identity, as
// ZooKeeper authorizes by the authentication id).
func (s *Server) User() string { return s.user }

// Next takes the client's token and returns the server's: the challenge
// for the first token (empty, or ignored), rspauth for the response. After an error
// or once complete, every further token is refused.
func (s *Server) Next(token []byte) ([]byte, error) {
	switch s.state {
	case awaitingStart:
		// The first token should be empty (the mechanism has no initial
		// response); Java's server ignores what it holds, and so do we.
		s.nonce = s.makeNonce()
		s.state = awaitingResponse
		return []byte("realm=" + quote(s.Host) + ",nonce=" + quote(s.nonce) + ",charset=utf-8,algorithm=md5-sess"), nil
	case awaitingResponse:
		return s.check(token)
	}
	return nil, s.fail(s.user, "server at illegal state (the exchange is over)")
}

func (s *Server) fail(user, reason string) error {
	s.state = failed
	return &Error{User: user, Reason: reason}
}

func (s *Server) makeNonce() string {
	if s.Nonce != nil {
		return s.Nonce()
	}
	b := make([]byte, 30)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// check verifies the client's digest-response (RFC 2831 section 2.1.2).
func (s *Server) check(token []byte) ([]byte, error) {
	if len(token) > maxToken {
		return nil, s.fail("", fmt.Sprintf("response of %d bytes (at most %d)", len(token), maxToken))
	}
	d, err := parseDirectives(token, nil)
	if err != nil {
		return nil, s.fail("", "malformed response: "+err.Error())
	}
	utf8Charset := false
	if cs, ok := d["charset"]; ok {
		if !strings.EqualFold(cs, "utf-8") {
			return nil, s.fail("", "charset must be utf-8")
		}
		utf8Charset = true
	}
	user, ok := d["username"]
	if !ok {
		return nil, s.fail("", "response without username")
	}
	user = decodeValue(user, utf8Charset)
	p, err := s.params(d, user, utf8Charset)
	if err != nil {
		return nil, err
	}
	password, known := s.Password(user)
	if !known {
		// Check the rest first, so that an unknown user and a wrong
		// password take the same path and the same answer.
		password = ""
	}
	p.password = hashInput(password, utf8Charset)
	want := p.compute("AUTHENTICATE")
	got := strings.ToLower(d["response"])
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 || !known {
		reason := "mismatched response (wrong password)"
		if !known {
			reason = "unknown user"
		}
		return nil, s.fail(user, reason)
	}
	s.user, s.state = user, complete
	return []byte("rspauth=" + p.compute("")), nil
}

// params checks the directives other than the digest and collects the
// hash inputs.
func (s *Server) params(d map[string]string, user string, utf8Charset bool) (digestParams, error) {
	realm := decodeValue(d["realm"], utf8Charset) // absent: "" (section 2.1.2)
	if _, given := d["realm"]; given && realm != s.Host {
		return digestParams{}, s.fail(user, fmt.Sprintf("unknown realm %q", realm))
	}
	if d["nonce"] != s.nonce {
		return digestParams{}, s.fail(user, "nonce does not match the challenge's")
	}
	if d["nc"] != "00000001" {
		return digestParams{}, s.fail(user, "nonce count must be 00000001")
	}
	if d["cnonce"] == "" {
		return digestParams{}, s.fail(user, "response without cnonce")
	}
	qop := d["qop"]
	if qop == "" {
		qop = "auth"
	}
	if qop != "auth" {
		return digestParams{}, s.fail(user, fmt.Sprintf("qop %q was not offered (only auth)", qop))
	}
	want := s.Service + "/" + s.Host
	if uri, ok := d["digest-uri"]; !ok || !strings.EqualFold(uri, want) {
		return digestParams{}, s.fail(user, fmt.Sprintf("digest-uri %q, expecting %q", d["digest-uri"], want))
	}
	if r := d["response"]; len(r) != 32 {
		return digestParams{}, s.fail(user, "response value is not 32 hex digits")
	}
	return digestParams{
		user: hashInput(user, utf8Charset), realm: hashInput(realm, utf8Charset),
		nonce: s.nonce, cnonce: d["cnonce"], nc: d["nc"], authzid: d["authzid"],
		qop: qop, digestURI: d["digest-uri"],
	}, nil
}
