package broker

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strings"

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

// scramServer is one SCRAM exchange. It keeps what the exchange said so
// far for the one case xdg-go/scram refuses and Kafka accepts (finalEcho).
type scramServer struct {
	mech        string
	newHash     func() hash.Hash
	conv        *scram.ServerConversation
	cred        scram.StoredCredentials // the user's, once looked up
	firstBare   string                  // client-first-message-bare
	serverFirst string                  // server-first-message
	nonce       string                  // its nonce, client's and server's
}

func (st *scramStore) newServer(mech string) (saslMechanism, error) {
	m, ok := scramMechanisms[mech]
	if !ok {
		return nil, fmt.Errorf("no SCRAM mechanism %s", mech)
	}
	s := &scramServer{mech: mech, newHash: m.newHash}
	srv, err := m.hash.NewServer(func(user string) (scram.StoredCredentials, error) {
		c, ok := st.lookup(user, mech)
		if !ok {
			return scram.StoredCredentials{}, errors.New("unknown user")
		}
		s.cred = c
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	s.conv = srv.WithNonceGenerator(scramNonce).NewConversation()
	return s, nil
}

// scramNonce is the server's part of the nonce: letters and digits only,
// as Kafka's ScramFormatter.secureRandomString makes it.
func scramNonce() string {
	var b [20]byte
	rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

func (s *scramServer) step(token []byte) ([]byte, bool, error) {
	if s.serverFirst != "" {
		if nonce, ok := finalNonce(string(token)); ok && nonce != s.nonce && strings.HasSuffix(nonce, s.nonce) {
			return s.finalEcho(string(token))
		}
	}
	out, err := s.conv.Step(string(token))
	if err != nil {
		// As Kafka, the client is not told why (a user that does not
		// exist and a wrong password look the same); the log is.
		return nil, false, &scramError{mech: s.mech, cause: err}
	}
	if !s.conv.Done() {
		s.serverFirst, s.nonce = out, attribute(out, "r")
		if _, bare, ok := strings.Cut(string(token), ","); ok { // past the gs2 header's flag
			_, s.firstBare, _ = strings.Cut(bare, ",") // and authzid
		}
		return []byte(out), false, nil
	}
	if !s.conv.Valid() {
		return nil, false, &scramError{mech: s.mech, cause: errors.New("invalid proof")}
	}
	return s.done([]byte(out))
}

// done ends a valid exchange with the server-final-message out.
func (s *scramServer) done(out []byte) ([]byte, bool, error) {
	if z := s.conv.AuthzID(); z != "" && z != s.conv.Username() {
		return nil, false, errors.New("Authentication failed: Client requested an authorization id that is different from username")
	}
	return out, true, nil
}

// finalEcho checks a client-final-message whose nonce ends with the
// server's without being it. librdkafka (2.0) sends its own nonce again
// before the one the server gave, and Kafka's ScramSaslServer accepts
// that (it checks endsWith, not equals), so zkafka does too. The proof
// is checked as RFC 5802 section 3 and Kafka's ScramFormatter do, over
// the messages as sent: ClientKey = proof XOR HMAC(StoredKey,
// AuthMessage) must hash to StoredKey; the answer is v=HMAC(ServerKey,
// AuthMessage).
func (s *scramServer) finalEcho(final string) ([]byte, bool, error) {
	fail := func(why string) ([]byte, bool, error) {
		return nil, false, &scramError{mech: s.mech, cause: errors.New(why)}
	}
	i := strings.LastIndex(final, ",p=")
	if i < 0 || attribute(final, "c") != "biws" {
		return fail("client-final-message without proof, or with channel binding")
	}
	proof, err := base64.StdEncoding.DecodeString(final[i+3:])
	if err != nil || s.cred.StoredKey == nil {
		return fail("bad proof")
	}
	auth := []byte(s.firstBare + "," + s.serverFirst + "," + final[:i])
	mac := func(key []byte) []byte {
		h := hmac.New(s.newHash, key)
		h.Write(auth)
		return h.Sum(nil)
	}
	sig := mac(s.cred.StoredKey)
	if len(proof) != len(sig) {
		return fail("bad proof")
	}
	for j := range sig {
		sig[j] ^= proof[j] // the client key
	}
	h := s.newHash()
	h.Write(sig)
	if subtle.ConstantTimeCompare(h.Sum(nil), s.cred.StoredKey) != 1 {
		return fail("invalid proof")
	}
	return s.done([]byte("v=" + base64.StdEncoding.EncodeToString(mac(s.cred.ServerKey))))
}

// finalNonce is the r= attribute of a client-final-message.
func finalNonce(msg string) (string, bool) {
	v := attribute(msg, "r")
	return v, v != ""
}

// attribute is the value of SCRAM attribute name in msg (a,b=...,...).
func attribute(msg, name string) string {
	for _, f := range strings.Split(msg, ",") {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	return ""
}

func (s *scramServer) user() string { return s.conv.Username() }

// scramError is a failed SCRAM exchange: its text is what the client is
// told, cause what the broker logs.
type scramError struct {
	mech  string
	cause error
}

func (e *scramError) Error() string {
	return "Authentication failed during authentication due to invalid credentials with SASL mechanism " + e.mech
}

func (e *scramError) Unwrap() error { return e.cause }

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
