package broker

// To be replaced by internal/keystore at merge: this file loads the PEM and
// PKCS12 keystores and truststores of the SSL listeners so that the broker
// does not wait for that package; internal/keystore adds JKS with the same
// two functions (LoadKeyPair, LoadTrustPool).

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"software.sslmate.com/src/go-pkcs12"
)

// loadKeyPair reads the broker's certificate chain and private key from a
// keystore of type typ (PEM or PKCS12; JKS needs internal/keystore).
func loadKeyPair(path, password, typ string) (tls.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return tls.Certificate{}, err
	}
	switch typ {
	case "PEM":
		// Kafka's PEM keystore: the key and its chain in one file.
		return tls.X509KeyPair(data, data)
	case "PKCS12":
		key, leaf, chain, err := pkcs12.DecodeChain(data, password)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: %w", path, err)
		}
		c := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
		for _, ca := range chain {
			c.Certificate = append(c.Certificate, ca.Raw)
		}
		return c, nil
	}
	return tls.Certificate{}, fmt.Errorf("%s: %s keystores are not supported yet (use PEM or PKCS12)", path, typ)
}

// loadTrustPool reads the CA certificates of a truststore.
func loadTrustPool(path, password, typ string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	switch typ {
	case "PEM":
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("%s: no PEM certificate found", path)
		}
		return pool, nil
	case "PKCS12":
		certs, err := pkcs12.DecodeTrustStore(data, password)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(certs) == 0 {
			return nil, errors.New(path + ": no certificate in the truststore")
		}
		for _, c := range certs {
			pool.AddCert(c)
		}
		return pool, nil
	}
	return nil, fmt.Errorf("%s: %s truststores are not supported yet (use PEM or PKCS12)", path, typ)
}
