package keystore

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"software.sslmate.com/src/go-pkcs12"
)

// Type is a keystore file type.
type Type string

// The types Java servers accept (ssl.keyStore.type and friends).
const (
	PEM    Type = "PEM"
	PKCS12 Type = "PKCS12"
	JKS    Type = "JKS"
)

// ParseType maps a configured type name to a Type. An empty name is guessed
// from path's extension; an unknown name, or an empty one with an unknown
// extension, is an error that names what is accepted.
func ParseType(name, path string) (Type, error) {
	switch strings.ToUpper(strings.TrimSpace(name)) {
	case "PEM":
		return PEM, nil
	case "PKCS12":
		return PKCS12, nil
	case "JKS":
		return JKS, nil
	case "":
	default:
		return "", fmt.Errorf("keystore: unknown type %q (want PEM, PKCS12 or JKS)", name)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pem":
		return PEM, nil
	case ".p12", ".pfx":
		return PKCS12, nil
	case ".jks":
		return JKS, nil
	}
	return "", fmt.Errorf("keystore: cannot tell the type of %q from its name; set the type (PEM, PKCS12 or JKS)", path)
}

// LoadKeyPair reads the certificate chain and private key of a keystore.
// typ is a type name as configured ("" guesses from path). For PEM the file
// holds both the key and the certificates, as ZooKeeper's PEMFileLoader
// expects; password, if set, decrypts nothing (encrypted PEM keys are not
// supported). A PKCS12 or JKS store must hold exactly one private key entry.
func LoadKeyPair(path, password, typ string) (tls.Certificate, error) {
	t, err := ParseType(typ, path)
	if err != nil {
		return tls.Certificate{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("keystore: %w", err)
	}
	var cert tls.Certificate
	switch t {
	case PEM:
		if bytes.Contains(data, []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
			return tls.Certificate{}, fmt.Errorf("keystore: PEM %s: encrypted private keys are not supported; store the key unencrypted or use PKCS12", path)
		}
		cert, err = tls.X509KeyPair(data, data)
	case PKCS12:
		cert, err = pkcs12KeyPair(data, password)
	case JKS:
		cert, err = jksKeyPair(data, password)
	}
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("keystore: %s %s: %w", t, path, err)
	}
	return cert, nil
}

// LoadTrustPool reads the CA certificates of a trust store.
func LoadTrustPool(path, password, typ string) (*x509.CertPool, error) {
	t, err := ParseType(typ, path)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	var certs []*x509.Certificate
	switch t {
	case PEM:
		certs, err = pemCerts(data)
	case PKCS12:
		certs, err = pkcs12.DecodeTrustStore(data, password)
	case JKS:
		certs, err = jksTrusted(data, password)
	}
	if err == nil && len(certs) == 0 {
		err = fmt.Errorf("no certificates")
	}
	if err != nil {
		return nil, fmt.Errorf("keystore: %s %s: %w", t, path, err)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

func pemCerts(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return certs, nil
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
}

func pkcs12KeyPair(data []byte, password string) (tls.Certificate, error) {
	key, leaf, cas, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		return tls.Certificate{}, err
	}
	cert := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, c := range cas {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return cert, nil
}
