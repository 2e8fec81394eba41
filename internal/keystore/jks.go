package keystore

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"

	jks "github.com/pavlo-v-chernykh/keystore-go/v4"
)

func loadJKS(data []byte, password string) (jks.KeyStore, error) {
	ks := jks.New()
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return ks, err
	}
	return ks, nil
}

// jksKeyPair takes the one private key entry of a JKS store; its key
// password is the store password, as Java's KeyManagerFactory assumes when
// ZooKeeper's X509Util loads it.
func jksKeyPair(data []byte, password string) (tls.Certificate, error) {
	ks, err := loadJKS(data, password)
	if err != nil {
		return tls.Certificate{}, err
	}
	var found []string
	for _, a := range ks.Aliases() {
		if ks.IsPrivateKeyEntry(a) {
			found = append(found, a)
		}
	}
	if len(found) != 1 {
		return tls.Certificate{}, fmt.Errorf("want one private key entry, found %d", len(found))
	}
	e, err := ks.GetPrivateKeyEntry(found[0], []byte(password))
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	var cert tls.Certificate
	cert.PrivateKey = key
	for _, c := range e.CertificateChain {
		cert.Certificate = append(cert.Certificate, c.Content)
	}
	if len(cert.Certificate) == 0 {
		return tls.Certificate{}, fmt.Errorf("entry %q has no certificate", found[0])
	}
	cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0])
	return cert, err
}

// jksTrusted takes the trusted certificate entries of a JKS store, which is
// what a trust store made with keytool -importcert holds.
func jksTrusted(data []byte, password string) ([]*x509.Certificate, error) {
	ks, err := loadJKS(data, password)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for _, a := range ks.Aliases() {
		if !ks.IsTrustedCertificateEntry(a) {
			continue
		}
		e, err := ks.GetTrustedCertificateEntry(a)
		if err != nil {
			return nil, err
		}
		c, err := x509.ParseCertificate(e.Certificate.Content)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	return certs, nil
}
