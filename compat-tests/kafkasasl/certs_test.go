package kafkasasl

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"

	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// pki is a CA made for one test, with a server certificate for 127.0.0.1
// and a client certificate, written as the files a broker is given.
type pki struct {
	caPool     *x509.CertPool
	caPEM      string // file: the CA certificate (a PEM truststore)
	serverPEM  string // file: server key and certificate (a PEM keystore)
	serverP12  string // file: the same as PKCS12 with the CA, password "changeit"
	clientCert tls.Certificate
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	dir := t.TempDir()
	p := keystoretest.NewPKI(t, "test CA")
	client := keystoretest.Leaf(t, p.CA, pkix.Name{CommonName: "client"})
	return &pki{
		caPool:     p.Roots,
		caPEM:      keystoretest.WriteCertPEM(t, dir, "ca.pem", p.CA),
		serverPEM:  keystoretest.WritePEM(t, dir, "server.pem", p.Server),
		serverP12:  keystoretest.WritePKCS12(t, dir, "server.p12", "changeit", p.Server, p.CA),
		clientCert: tls.Certificate{Certificate: [][]byte{client.Cert.Raw, p.CA.Cert.Raw}, PrivateKey: client.Key, Leaf: client.Cert},
	}
}
