package digestmd5

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Client is the client side of one DIGEST-MD5 exchange, as Java's client
// answers (charset=utf-8, maxbuf=65536, qop=auth).
type Client struct {
	User, Password string
	Service, Host  string // the digest-uri's parts: "zookeeper", "zk-sasl-md5"
	// CNonce makes the client nonce; nil: 30 random bytes in base64.
	CNonce func() string

	params digestParams
	done   bool
}

// Respond answers the server's challenge with the digest-response.
func (c *Client) Respond(challenge []byte) ([]byte, error) {
	d, err := parseDirectives(challenge, map[string]bool{"realm": true})
	if err != nil {
		return nil, fmt.Errorf("DIGEST-MD5: malformed challenge: %w", err)
	}
	if d["nonce"] == "" {
		return nil, errors.New("DIGEST-MD5: challenge without nonce")
	}
	if q, ok := d["qop"]; ok && !containsToken(q, "auth") {
		return nil, fmt.Errorf("DIGEST-MD5: server offers qop %q, not auth", q)
	}
	cnonce := ""
	if c.CNonce != nil {
		cnonce = c.CNonce()
	} else {
		b := make([]byte, 30)
		rand.Read(b)
		cnonce = base64.StdEncoding.EncodeToString(b)
	}
	realm := d["realm"]
	c.params = digestParams{
		user: hashInput(c.User, true), realm: hashInput(realm, true), password: hashInput(c.Password, true),
		nonce: d["nonce"], cnonce: cnonce, nc: "00000001", qop: "auth", digestURI: c.Service + "/" + c.Host,
	}
	var b strings.Builder
	b.WriteString("charset=utf-8,username=" + quote(c.User))
	if _, ok := d["realm"]; ok {
		b.WriteString(",realm=" + quote(realm))
	}
	b.WriteString(",nonce=" + quote(c.params.nonce) + ",nc=00000001,cnonce=" + quote(cnonce) +
		",digest-uri=" + quote(c.params.digestURI) + ",maxbuf=65536,response=" + c.params.compute("AUTHENTICATE") + ",qop=auth")
	return []byte(b.String()), nil
}

// Verify checks the server's rspauth (mutual authentication).
func (c *Client) Verify(final []byte) error {
	d, err := parseDirectives(final, nil)
	if err != nil {
		return fmt.Errorf("DIGEST-MD5: malformed server response: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(strings.ToLower(d["rspauth"])), []byte(c.params.compute(""))) != 1 {
		return errors.New("DIGEST-MD5: the server's rspauth does not match (it does not know the password)")
	}
	c.done = true
	return nil
}

// Complete reports whether the server was verified.
func (c *Client) Complete() bool { return c.done }

func containsToken(list, tok string) bool {
	for _, t := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(t), tok) {
			return true
		}
	}
	return false
}
