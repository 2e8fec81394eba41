package x509name

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"

	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// TestRFC2253 checks RFC2253 against what Java 17's
// X500Principal.getName() printed for the same certificates (made here,
// written out as DER, read by a CertificateFactory).
func TestRFC2253(t *testing.T) {
	ca := keystoretest.CA(t, "ca")
	for _, tc := range []struct {
		name pkix.Name
		want string
	}{
		{pkix.Name{CommonName: "alice", Organization: []string{"zkafka"}}, "CN=alice,O=zkafka"},
		{pkix.Name{CommonName: "a,b+c", OrganizationalUnit: []string{"x", "y"}, Country: []string{"FR"}}, `CN=a\,b\+c,OU=x+OU=y,C=FR`},
		{pkix.Name{CommonName: "a#b;c\"d\\e=f"}, `CN=a\#b\;c\"d\\e\=f`},
		{pkix.Name{CommonName: " #lead", Locality: []string{"trail "}, Province: []string{"ST<>"}}, `CN=\ \#lead,L=trail\ ,ST=ST\<\>`},
		{pkix.Name{CommonName: "n", SerialNumber: "42"}, "2.5.4.5=#13023432,CN=n"},
		{pkix.Name{ExtraNames: []pkix.AttributeTypeAndValue{
			{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, Value: "example"},
			{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}, Value: "u1"},
		}}, "UID=u1,DC=example"},
	} {
		leaf := keystoretest.Leaf(t, ca, tc.name)
		if got := RFC2253(leaf.Cert); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.name, got, tc.want)
		}
		if dumpDir != "" {
			keystoretest.WriteCertPEM(t, dumpDir, tc.want+".pem", leaf)
		}
	}
}

// dumpDir, when set by hand, receives the certificates for the Java check,
// which prints getSubjectX500Principal().getName() of each (java DN.java *.pem):
//
//	public class DN { public static void main(String[] a) throws Exception {
//	  var f = java.security.cert.CertificateFactory.getInstance("X.509");
//	  for (String p : a) System.out.println(((java.security.cert.X509Certificate)
//	    f.generateCertificate(new java.io.FileInputStream(p))).getSubjectX500Principal().getName());
//	}}
var dumpDir = ""

// BenchmarkRFC2253: the cost of one principal from a client certificate.
func BenchmarkRFC2253(b *testing.B) {
	ca := keystoretest.CA(b, "ca")
	leaf := keystoretest.Leaf(b, ca, pkix.Name{CommonName: "alice", Organization: []string{"zkafka"}})
	b.ReportAllocs()
	for b.Loop() {
		RFC2253(leaf.Cert)
	}
}
