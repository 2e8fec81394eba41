package broker

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/base64"
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

// TestScramFinalEcho: a client-final-message that repeats the client's
// nonce before the server's (librdkafka 2.0) is accepted with the right
// password, as Kafka accepts it, and refused with a wrong one; the
// server signature is the one the client expects.
func TestScramFinalEcho(t *testing.T) {
	st := &scramStore{}
	st.mu.users = map[string]map[string]scram.StoredCredentials{}
	salt := []byte("salt of the user")
	cl, _ := scram.SHA512.NewClient("rd", "right-pw", "")
	st.mu.users["rd"] = map[string]scram.StoredCredentials{"SCRAM-SHA-512": cl.GetStoredCredentials(scram.KeyFactors{Salt: string(salt), Iters: 4096})}
	for _, pw := range []string{"right-pw", "wrong-pw"} {
		m, err := st.newServer("SCRAM-SHA-512")
		if err != nil {
			t.Fatal(err)
		}
		const cnonce = "y=.zK8|5ED2T[TxM4X"
		first, done, err := m.step([]byte("n,,n=rd,r=" + cnonce))
		if err != nil || done {
			t.Fatalf("first step: %v %v", done, err)
		}
		nonce := attribute(string(first), "r")
		wop := "c=biws,r=" + cnonce + nonce // librdkafka's
		salted, _ := pbkdf2.Key(sha512.New, pw, salt, 4096, sha512.Size)
		mac := func(key []byte, data string) []byte {
			h := hmac.New(sha512.New, key)
			h.Write([]byte(data))
			return h.Sum(nil)
		}
		clientKey := mac(salted, "Client Key")
		stored := sha512.Sum512(clientKey)
		auth := "n=rd,r=" + cnonce + "," + string(first) + "," + wop
		sig := mac(stored[:], auth)
		for i := range sig {
			sig[i] ^= clientKey[i]
		}
		out, done, err := m.step([]byte(wop + ",p=" + base64.StdEncoding.EncodeToString(sig)))
		if pw == "wrong-pw" {
			if err == nil || done {
				t.Fatalf("a wrong password passed: %s", out)
			}
			continue
		}
		want := "v=" + base64.StdEncoding.EncodeToString(mac(mac(salted, "Server Key"), auth))
		if err != nil || !done || string(out) != want || m.user() != "rd" {
			t.Fatalf("final: %q %v %v, want %q", out, done, err, want)
		}
	}
}
