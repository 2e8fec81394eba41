package keystore_test

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"os"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/internal/keystore"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// verify checks that pool trusts leaf.
func verify(t *testing.T, pool *x509.CertPool, leaf *x509.Certificate) {
	t.Helper()
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

func TestPEMAndPKCS12(t *testing.T) {
	dir := t.TempDir()
	ca := keystoretest.CA(t, "test CA")
	leaf := keystoretest.Leaf(t, ca, pkix.Name{CommonName: "server"})
	for _, tc := range []struct{ name, key, trust, typ string }{
		{"pem", keystoretest.WritePEM(t, dir, "k.pem", leaf), keystoretest.WriteCertPEM(t, dir, "t.pem", ca), "PEM"},
		{"pem-guessed", dir + "/k.pem", dir + "/t.pem", ""},
		{"pkcs12", keystoretest.WritePKCS12(t, dir, "k.p12", "pw", leaf, ca), keystoretest.WritePKCS12Trust(t, dir, "t.p12", "pw", ca), "pkcs12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert, err := keystore.LoadKeyPair(tc.key, "pw", tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			if !cert.Leaf.Equal(leaf.Cert) {
				t.Fatalf("leaf %v, want %v", cert.Leaf.Subject, leaf.Cert.Subject)
			}
			pool, err := keystore.LoadTrustPool(tc.trust, "pw", tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			verify(t, pool, cert.Leaf)
		})
	}
}

// TestJKS reads stores made by keytool (JDK):
//
//	keytool -genkeypair -alias server -keyalg EC -groupname secp256r1 \
//	  -dname "CN=localhost,O=zkafka" -ext SAN=ip:127.0.0.1,dns:localhost \
//	  -validity 36500 -keystore keystore.jks -storetype JKS \
//	  -storepass changeit -keypass changeit
//	keytool -exportcert -alias server -keystore keystore.jks -storepass changeit -rfc -file server.pem
//	keytool -importcert -noprompt -alias server -file server.pem \
//	  -keystore truststore.jks -storetype JKS -storepass changeit
func TestJKS(t *testing.T) {
	cert, err := keystore.LoadKeyPair("testdata/keystore.jks", "changeit", "JKS")
	if err != nil {
		t.Fatal(err)
	}
	if got := cert.Leaf.Subject.String(); got != "CN=localhost,O=zkafka" {
		t.Fatalf("subject %q", got)
	}
	pool, err := keystore.LoadTrustPool("testdata/truststore.jks", "changeit", "")
	if err != nil {
		t.Fatal(err)
	}
	verify(t, pool, cert.Leaf)
	if _, err := keystore.LoadKeyPair("testdata/keystore.jks", "wrong", "JKS"); err == nil {
		t.Fatal("wrong password accepted")
	}
}

func TestParseTypeErrors(t *testing.T) {
	if _, err := keystore.ParseType("BKS", "x"); err == nil || !strings.Contains(err.Error(), "PEM, PKCS12 or JKS") {
		t.Fatalf("err %v", err)
	}
	if _, err := keystore.ParseType("", "store.bin"); err == nil {
		t.Fatal("guessed a type for .bin")
	}
}

func TestEncryptedPEMRefused(t *testing.T) {
	p := keystoretest.WriteCertPEM(t, t.TempDir(), "k.pem")
	os.WriteFile(p, []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"), 0o600)
	if _, err := keystore.LoadKeyPair(p, "pw", "PEM"); err == nil || !strings.Contains(err.Error(), "encrypted private keys are not supported") {
		t.Fatalf("err %v", err)
	}
}
