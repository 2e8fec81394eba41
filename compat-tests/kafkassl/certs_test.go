package kafkassl

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// pki is a CA made for one test, with a server certificate for 127.0.0.1
// and a client certificate, written as the files a broker is given.
type pki struct {
	caPool     *x509.CertPool
	caPEM      string // file: the CA certificate (a PEM truststore)
	serverPEM  string // file: server key and chain (a PEM keystore)
	serverP12  string // file: the same as PKCS12, password "changeit"
	clientCert tls.Certificate
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	dir := t.TempDir()
	caKey, caCert := makeCert(t, "test CA", nil, nil, true)
	srvKey, srvCert := makeCert(t, "broker", caCert, caKey, false)
	cliKey, cliCert := makeCert(t, "client", caCert, caKey, false)
	p := &pki{caPool: x509.NewCertPool(), caPEM: filepath.Join(dir, "ca.pem"),
		serverPEM: filepath.Join(dir, "server.pem"), serverP12: filepath.Join(dir, "server.p12")}
	p.caPool.AddCert(caCert)
	write(t, p.caPEM, pemCert(caCert))
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	write(t, p.serverPEM, append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), append(pemCert(srvCert), pemCert(caCert)...)...))
	p12, err := pkcs12.Modern.Encode(srvKey, srvCert, []*x509.Certificate{caCert}, "changeit")
	if err != nil {
		t.Fatal(err)
	}
	write(t, p.serverP12, p12)
	p.clientCert = tls.Certificate{Certificate: [][]byte{cliCert.Raw, caCert.Raw}, PrivateKey: cliKey, Leaf: cliCert}
	return p
}

// makeCert makes a certificate for 127.0.0.1 signed by parent (self-signed
// when parent is nil).
func makeCert(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, isCA bool) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, c
}

func pemCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
