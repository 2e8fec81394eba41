package keystore

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
)

// CheckChainOnly makes c check the certificate chain its peer sends
// against roots (nil: the system's) for server authentication, but not the
// peer's host name, as ZooKeeper does with host name verification off: Go's
// crypto/tls checks both or neither. who names the peer in the error when
// it sends no certificate.
func CheckChainOnly(c *tls.Config, roots *x509.CertPool, who string) {
	c.InsecureSkipVerify = true
	c.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
		return verifyChain(raw, roots, who)
	}
}

// verifyChain checks a chain as a TLS peer sends it (leaf first) against
// roots, with no host name.
func verifyChain(raw [][]byte, roots *x509.CertPool, who string) error {
	if len(raw) == 0 {
		return errors.New(who + " sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, b := range raw {
		c, err := x509.ParseCertificate(b)
		if err != nil {
			return err
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err
}
