package broker

import (
	"crypto/tls"

	"github.com/zkafka/zkafka/internal/x509name"
)

// principal is the connection's Kafka principal, as Kafka's
// DefaultKafkaPrincipalBuilder gives it: on an SSL connection with a
// client certificate, "User:" + the certificate's subject DN (RFC 2253, as
// X500Principal.getName()) mapped by ssl.principal.mapping.rules (the DN
// itself with DEFAULT); otherwise "User:ANONYMOUS". A DN that no rule
// maps fails the connection, as Kafka fails its authentication: the
// connection is closed and principal is "" (refused everything).
//
// It is made once per connection (the handshake is over before the first
// request). This is the minimal version for the authorizer; the SASL work
// replaces it with the authenticated user (and keeps the certificate rule).
func (c *conn) principal() string {
	if c.certPrincipal != "" {
		if c.certPrincipal == unmappedPrincipal {
			return ""
		}
		return c.certPrincipal
	}
	c.certPrincipal = "User:ANONYMOUS"
	if tc, ok := c.nc.(*tls.Conn); ok {
		if st := tc.ConnectionState(); len(st.PeerCertificates) > 0 {
			dn := x509name.RFC2253(st.PeerCertificates[0])
			name, err := c.b.certPrincipalName(dn)
			if err != nil {
				c.log.Warn("closing connection: its certificate has no principal", "err", err)
				c.certPrincipal = unmappedPrincipal
				c.nc.Close()
				return ""
			}
			c.certPrincipal = "User:" + name
		}
	}
	return c.certPrincipal
}

// unmappedPrincipal marks a connection whose certificate no
// ssl.principal.mapping.rules rule maps.
const unmappedPrincipal = "\x00unmapped"

// certPrincipalName maps a certificate's DN (the DN itself without an
// authorizer, whose mapper holds the rules).
func (b *Broker) certPrincipalName(dn string) (string, error) {
	if b.acls == nil || b.acls.mapper == nil {
		return dn, nil
	}
	return b.acls.mapper.Name(dn)
}
