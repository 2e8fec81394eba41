package keystore_test

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/internal/keystore"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// TestCheckChainOnly: the chain is checked against the roots given, the
// host name not at all, and a peer with no certificate is named.
func TestCheckChainOnly(t *testing.T) {
	p := keystoretest.NewPKI(t, "chain CA")
	other := keystoretest.NewPKI(t, "other CA")
	for _, tc := range []struct {
		name    string
		pki     *keystoretest.PKI
		raw     [][]byte
		wantErr string
	}{
		{"trusted chain, any name", p, [][]byte{p.Server.Cert.Raw, p.CA.Cert.Raw}, ""},
		{"untrusted chain", other, [][]byte{p.Server.Cert.Raw}, "unknown authority"},
		{"no certificate", p, nil, "the peer sent no certificate"},
		{"not a certificate", p, [][]byte{[]byte("junk")}, "x509"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &tls.Config{ServerName: "not-the-name.example"}
			keystore.CheckChainOnly(c, tc.pki.Roots, "the peer")
			if !c.InsecureSkipVerify {
				t.Fatal("Go's own check (chain and name) is still on")
			}
			err := c.VerifyPeerCertificate(tc.raw, nil)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
		})
	}
}
