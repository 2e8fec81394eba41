package broker

import (
	"crypto/tls"

	"github.com/zkafka/zkafka/internal/x509name"
)

// The principal of a connection, as Kafka's DefaultKafkaPrincipalBuilder
// makes it: "User:NAME" for a SASL client (its authenticated user); for an
// SSL client that gave a certificate, "User:" + the certificate's subject
// DN (RFC 2253, as Java's X500Principal.getName()) mapped by
// ssl.principal.mapping.rules (the DN itself with DEFAULT); else
// "User:ANONYMOUS" (PLAINTEXT, and SSL without a client certificate). A DN
// that no rule maps fails the connection, as Kafka fails its
// authentication. ACL checks read it.

// anonymousPrincipal is Kafka's KafkaPrincipal.ANONYMOUS.
const anonymousPrincipal = "User:ANONYMOUS"

// principal is the connection's principal. It is set by the reader
// goroutine (after the TLS handshake, when SASL authentication completes)
// before the requests it applies to are dispatched; other goroutines may
// read it too.
func (c *conn) principal() string {
	if p := c.princ.Load(); p != nil {
		return *p
	}
	return anonymousPrincipal
}

// setPrincipal sets the principal, "User:" + name.
func (c *conn) setPrincipal(name string) {
	p := "User:" + name
	c.princ.Store(&p)
}

// setTLSPrincipal takes the principal of a TLS connection's client
// certificate, if it gave one. It reports false when no mapping rule maps
// the certificate's DN: the caller closes the connection.
func (c *conn) setTLSPrincipal(st tls.ConnectionState) bool {
	if len(st.PeerCertificates) == 0 {
		return true
	}
	name, err := c.b.certPrincipalName(x509name.RFC2253(st.PeerCertificates[0]))
	if err != nil {
		c.log.Warn("closing connection: its certificate has no principal", "err", err)
		return false
	}
	c.setPrincipal(name)
	return true
}

// certPrincipalName maps a certificate's DN (the DN itself without an
// authorizer, whose mapper holds the rules).
func (b *Broker) certPrincipalName(dn string) (string, error) {
	if b.acls == nil || b.acls.mapper == nil {
		return dn, nil
	}
	return b.acls.mapper.Name(dn)
}
