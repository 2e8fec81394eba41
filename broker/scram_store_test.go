package broker

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"crypto/x509/pkix"
	"encoding/asn1"
	"reflect"
	"testing"

	"github.com/xdg-go/scram"
)

// TestScramCredential: the credential the broker derives from a salted
// password (AlterUserScramCredentials) is the one xdg-go/scram's client
// derives from the password, and it round-trips through Kafka's text form.
func TestScramCredential(t *testing.T) {
	salt := []byte("some salt bytes")
	salted, err := pbkdf2.Key(sha512.New, "pencil", salt, 4096, sha512.Size)
	if err != nil {
		t.Fatal(err)
	}
	got := scramCredential("SCRAM-SHA-512", salt, salted, 4096)
	cl, err := scram.SHA512.NewClient("user", "pencil", "")
	if err != nil {
		t.Fatal(err)
	}
	want := cl.GetStoredCredentials(scram.KeyFactors{Salt: string(salt), Iters: 4096})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("derived %+v, want %+v", got, want)
	}
	back, err := parseScramCredential(formatScramCredential(got))
	if err != nil || !reflect.DeepEqual(back, got) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	for _, bad := range []string{"", "salt=AA==", "salt=AA==,stored_key=AA==,server_key=AA==,iterations=x",
		"salt=!!,stored_key=AA==,server_key=AA==,iterations=4096", "salt=AA==,stored_key=AA==,server_key=AA==,iterations=0"} {
		if _, err := parseScramCredential(bad); err == nil {
			t.Errorf("parseScramCredential(%q): no error", bad)
		}
	}
}

// TestSanitize: user names in znode paths as Kafka's Sanitizer writes them.
func TestSanitize(t *testing.T) {
	for name, want := range map[string]string{
		"alice": "alice", "a.b-c_d": "a.b-c_d", "bob smith": "bob%20smith", "x*": "x%2A",
		"CN=a,O=b": "CN%3Da%2CO%3Db", "ü": "%C3%BC", "a/b": "a%2Fb", "~": "%7E",
	} {
		if got := sanitize(name); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", name, got, want)
		}
		if back := desanitize(want); back != name {
			t.Errorf("desanitize(%q) = %q, want %q", want, back, name)
		}
	}
	for data, want := range map[string]string{
		`{"version":2,"entity_path":"users/bob%20smith"}`:           "bob smith",
		`{"version":1,"entity_type":"users","entity_name":"carol"}`: "carol",
		`{"version":2,"entity_path":"users/dave/clients/app"}`:      "",
		`{"version":2,"entity_path":"topics/t"}`:                    "",
		`not json`:                                                  "",
	} {
		got, ok := changedUser([]byte(data))
		if got != want || ok != (want != "") {
			t.Errorf("changedUser(%s) = %q %v, want %q", data, got, ok, want)
		}
	}
}

// TestSubjectDN: a certificate subject as Java's X500Principal.getName()
// writes it, the last RDN first, in the certificate's order.
func TestSubjectDN(t *testing.T) {
	name := pkix.Name{Country: []string{"US"}, Organization: []string{"Example"}, OrganizationalUnit: []string{"eng"}, CommonName: "alice"}
	raw, err := asn1.Marshal(name.ToRDNSequence())
	if err != nil {
		t.Fatal(err)
	}
	if got := subjectDN(raw); got != "CN=alice,OU=eng,O=Example,C=US" {
		t.Fatalf("subjectDN = %q", got)
	}
	if got := subjectDN([]byte("junk")); got != "ANONYMOUS" {
		t.Fatalf("subjectDN(junk) = %q", got)
	}
}
