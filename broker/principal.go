package broker

import (
	"crypto/tls"

	"github.com/zkafka/zkafka/internal/x509name"
)

// principal is the connection's Kafka principal, as Kafka's
// DefaultKafkaPrincipalBuilder gives it: "User:" + the client
// certificate's subject DN (RFC 2253, as X500Principal.getName(), with
// ssl.principal.mapping.rules=DEFAULT) on an SSL connection with a client
// certificate, else "User:ANONYMOUS".
//
// It is made once per connection (the handshake is over before the first
// request). This is the minimal version for the authorizer; the SASL work
// replaces it with the authenticated user (and keeps the certificate rule).
func (c *conn) principal() string {
	if c.certPrincipal != "" {
		return c.certPrincipal
	}
	c.certPrincipal = "User:ANONYMOUS"
	if tc, ok := c.nc.(*tls.Conn); ok {
		if st := tc.ConnectionState(); len(st.PeerCertificates) > 0 {
			c.certPrincipal = "User:" + x509name.RFC2253(st.PeerCertificates[0])
		}
	}
	return c.certPrincipal
}
