package keystore

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"

	"github.com/youmark/pkcs8"
)

// PEMKeyPair is the certificate chain and private key of PEM text, as
// Kafka's PEM keystores have them (ssl.keystore.certificate.chain and
// ssl.keystore.key, or one file holding both): the key unencrypted, or an
// encrypted PKCS#8 key ("ENCRYPTED PRIVATE KEY", PBES2) that password
// decrypts (ssl.key.password), through github.com/youmark/pkcs8. Errors
// never quote the text.
func PEMKeyPair(chain, key []byte, password string) (tls.Certificate, error) {
	chain, key = normalizePEM(chain), normalizePEM(key)
	block := encryptedBlock(key)
	if block == nil {
		cert, err := tls.X509KeyPair(chain, key)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("PEM key pair: %w", err)
		}
		return cert, nil
	}
	if password == "" {
		return tls.Certificate{}, errors.New("PEM key pair: the private key is encrypted and no key password is set")
	}
	priv, err := pkcs8.ParsePKCS8PrivateKey(block.Bytes, []byte(password))
	if err != nil {
		return tls.Certificate{}, errors.New("PEM key pair: the encrypted private key could not be decrypted (wrong key password, or not a PBES2 PKCS#8 key)")
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("PEM key pair: %w", err)
	}
	cert, err := tls.X509KeyPair(chain, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("PEM key pair: %w", err)
	}
	return cert, nil
}

// pemBlock is one "-----BEGIN T-----...-----END T-----" of PEM text whose
// line breaks may be gone.
var pemBlock = regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\s]*)-----END ([A-Z0-9 ]+)-----`)

// normalizePEM rewrites PEM text as encoding/pem reads it. A PEM value in
// server.properties is usually one line (a backslash-continued value
// loses its line breaks), which Kafka's PemStore reads by ignoring the
// whitespace in the base64 body, as this does. Text with no block whose
// body decodes is returned as it is.
func normalizePEM(data []byte) []byte {
	var out []byte
	for _, m := range pemBlock.FindAllSubmatch(data, -1) {
		if !bytes.Equal(m[1], m[3]) {
			return data
		}
		body, err := base64.StdEncoding.DecodeString(string(bytes.Join(bytes.Fields(m[2]), nil)))
		if err != nil {
			return data
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: string(m[1]), Bytes: body})...)
	}
	if out == nil {
		return data
	}
	return out
}

// encryptedBlock is the first ENCRYPTED PRIVATE KEY block of data (nil
// when it has none).
func encryptedBlock(data []byte) *pem.Block {
	if !bytes.Contains(data, []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
		return nil
	}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" {
			return b
		}
	}
}

// PEMTrustPool is the CA certificates of PEM text (Kafka's
// ssl.truststore.certificates).
func PEMTrustPool(data []byte) (*x509.CertPool, error) {
	certs, err := pemCerts(normalizePEM(data))
	if err == nil && len(certs) == 0 {
		err = errors.New("no certificates")
	}
	if err != nil {
		return nil, fmt.Errorf("PEM certificates: %w", err)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}
