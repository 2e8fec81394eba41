package keystore

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/youmark/pkcs8"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// TestPEMKeyPairInline: Kafka's inline PEM keys, the key unencrypted or
// an encrypted PKCS#8 key with its password; a wrong or missing password
// is an error that quotes neither the key nor the password.
func TestPEMKeyPairInline(t *testing.T) {
	ca := keystoretest.CA(t, "ca")
	leaf := keystoretest.Leaf(t, ca, pkix.Name{CommonName: "inline"})
	chain := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Cert.Raw})
	chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})...)
	der, err := x509.MarshalPKCS8PrivateKey(leaf.Key)
	if err != nil {
		t.Fatal(err)
	}
	plainKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	encDER, err := pkcs8.MarshalPrivateKey(leaf.Key, []byte("key-pass"), nil)
	if err != nil {
		t.Fatal(err)
	}
	encKey := pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: encDER})
	for _, tc := range []struct {
		name, pass string
		key        []byte
		ok         bool
	}{
		{"plain", "", plainKey, true},
		{"one line", "", oneLine(plainKey), true},
		{"encrypted on one line", "key-pass", oneLine(encKey), true},
		{"encrypted", "key-pass", encKey, true},
		{"wrong password", "nope-pass", encKey, false},
		{"no password", "", encKey, false},
	} {
		cert, err := PEMKeyPair(chain, tc.key, tc.pass)
		if tc.ok != (err == nil) {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if err != nil {
			if strings.Contains(err.Error(), tc.pass) && tc.pass != "" || strings.Contains(err.Error(), "BEGIN") {
				t.Errorf("%s: the error shows a secret: %v", tc.name, err)
			}
			continue
		}
		if len(cert.Certificate) != 2 || cert.Leaf == nil || cert.Leaf.Subject.CommonName != "inline" {
			t.Errorf("%s: certificate %d entries, leaf %v", tc.name, len(cert.Certificate), cert.Leaf)
		}
	}
	if pool, err := PEMTrustPool(oneLine(chain)); err != nil || pool == nil {
		t.Fatalf("trust pool: %v", err)
	}
	if _, err := PEMTrustPool(plainKey); err == nil {
		t.Fatal("a trust pool of no certificates")
	}
}

// oneLine is PEM text as a backslash-continued server.properties value
// gives it: its lines joined by spaces.
func oneLine(b []byte) []byte { return []byte(strings.Join(strings.Fields(string(b)), " ")) }
