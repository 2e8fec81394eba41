package broker

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/asn1"
)

// The principal of a connection, as Kafka's DefaultKafkaPrincipalBuilder
// makes it: "User:NAME" for a SASL client (its authenticated user), the
// client certificate's subject for an SSL client that gave one
// ("User:CN=alice,OU=eng,O=Example", RFC 2253 as Java's
// X500Principal.getName(), most specific part first), else
// "User:ANONYMOUS" (PLAINTEXT, and SSL without a client certificate).
// ACL checks read it.

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
// certificate, if it gave one.
func (c *conn) setTLSPrincipal(st tls.ConnectionState) {
	if len(st.PeerCertificates) == 0 {
		return
	}
	c.setPrincipal(subjectDN(st.PeerCertificates[0].RawSubject))
}

// subjectDN is a certificate subject in RFC 2253 form, from its DER bytes
// (so the attributes keep their order, which pkix.Name does not).
func subjectDN(raw []byte) string {
	var rdns pkix.RDNSequence
	if rest, err := asn1.Unmarshal(raw, &rdns); err != nil || len(rest) > 0 {
		return "ANONYMOUS"
	}
	return rdns.String()
}
