// Package keystoretest makes certificates and keystore files for tests:
// a CA, leaves it signs, and the PEM and PKCS12 files Java servers read.
package keystoretest

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

// Cert is a certificate and its key.
type Cert struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

var serial int64

func issue(t testing.TB, tmpl *x509.Certificate, parent *Cert) *Cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano() + serial)
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	signer, signerCert := key, tmpl
	if parent != nil {
		signer, signerCert = parent.Key, parent.Cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &Cert{Cert: c, Key: key}
}

// CA makes a self-signed CA named cn.
func CA(t testing.TB, cn string) *Cert {
	return issue(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil)
}

// Leaf makes a certificate for subject signed by ca, good for a server on
// 127.0.0.1/localhost and for a client.
func Leaf(t testing.TB, ca *Cert, subject pkix.Name) *Cert {
	return issue(t, &x509.Certificate{
		Subject:     subject,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}, ca)
}

// WritePEM writes c's key and certificate into dir/name and returns the path.
func WritePEM(t testing.TB, dir, name string, c *Cert) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		t.Fatal(err)
	}
	data := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	data = append(data, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Cert.Raw})...)
	return write(t, dir, name, data)
}

// WriteCertPEM writes certificates only (a PEM trust store).
func WriteCertPEM(t testing.TB, dir, name string, certs ...*Cert) string {
	t.Helper()
	var data []byte
	for _, c := range certs {
		data = append(data, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Cert.Raw})...)
	}
	return write(t, dir, name, data)
}

// WritePKCS12 writes c as a PKCS12 key store with password.
func WritePKCS12(t testing.TB, dir, name, password string, c *Cert, chain ...*Cert) string {
	t.Helper()
	var cas []*x509.Certificate
	for _, x := range chain {
		cas = append(cas, x.Cert)
	}
	data, err := pkcs12.Modern.Encode(c.Key, c.Cert, cas, password)
	if err != nil {
		t.Fatal(err)
	}
	return write(t, dir, name, data)
}

// WritePKCS12Trust writes certs as a PKCS12 trust store with password.
func WritePKCS12Trust(t testing.TB, dir, name, password string, certs ...*Cert) string {
	t.Helper()
	var xs []*x509.Certificate
	for _, x := range certs {
		xs = append(xs, x.Cert)
	}
	data, err := pkcs12.Modern.EncodeTrustStore(xs, password)
	if err != nil {
		t.Fatal(err)
	}
	return write(t, dir, name, data)
}

func write(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// PKI is a CA with a server certificate (CN=localhost) and two client
// certificates, CN=alice,O=zkafka and CN=bob,O=zkafka; Roots trusts the CA.
type PKI struct {
	CA, Server, Alice, Bob *Cert
	Roots                  *x509.CertPool
}

// NewPKI makes a PKI whose CA is named caName.
func NewPKI(t testing.TB, caName string) *PKI {
	ca := CA(t, caName)
	p := &PKI{
		CA:     ca,
		Server: Leaf(t, ca, pkix.Name{CommonName: "localhost"}),
		Alice:  Leaf(t, ca, pkix.Name{CommonName: "alice", Organization: []string{"zkafka"}}),
		Bob:    Leaf(t, ca, pkix.Name{CommonName: "bob", Organization: []string{"zkafka"}}),
		Roots:  x509.NewCertPool(),
	}
	p.Roots.AddCert(ca.Cert)
	return p
}

// BrokerFiles is a CA made for one test with a server certificate for
// 127.0.0.1 and a client certificate, written as the files a broker is given.
type BrokerFiles struct {
	CAPool     *x509.CertPool
	CAPEM      string // file: the CA certificate (a PEM truststore)
	ServerPEM  string // file: server key and certificate (a PEM keystore)
	ServerP12  string // file: the same as PKCS12 with the CA, password "changeit"
	ClientCert tls.Certificate
}

// NewBrokerFiles makes a BrokerFiles in a directory of t's.
func NewBrokerFiles(t testing.TB) *BrokerFiles {
	t.Helper()
	dir := t.TempDir()
	p := NewPKI(t, "test CA")
	client := Leaf(t, p.CA, pkix.Name{CommonName: "client"})
	return &BrokerFiles{
		CAPool:     p.Roots,
		CAPEM:      WriteCertPEM(t, dir, "ca.pem", p.CA),
		ServerPEM:  WritePEM(t, dir, "server.pem", p.Server),
		ServerP12:  WritePKCS12(t, dir, "server.p12", "changeit", p.Server, p.CA),
		ClientCert: tls.Certificate{Certificate: [][]byte{client.Cert.Raw, p.CA.Cert.Raw}, PrivateKey: client.Key, Leaf: client.Cert},
	}
}
