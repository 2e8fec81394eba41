package digestmd5

import (
	"crypto/md5"
	"encoding/hex"
	"unicode/utf8"
)

// hashInput is the bytes of a user name, realm or password in the hashes:
// ISO 8859-1 when every character fits, else UTF-8 (RFC 2831 section
// 2.1.2.1; Java's stringToByte_8859_1). Without charset=utf-8 a character
// beyond ISO 8859-1 becomes '?', as Java's encoder writes it.
func hashInput(s string, utf8Charset bool) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			if utf8Charset {
				return []byte(s)
			}
			r = '?'
		}
		out = append(out, byte(r))
	}
	return out
}

// decodeValue turns a directive's bytes into text: UTF-8 under
// charset=utf-8 (when valid), else ISO 8859-1.
func decodeValue(v string, utf8Charset bool) string {
	if utf8Charset && utf8.ValidString(v) {
		return v
	}
	r := make([]rune, len(v))
	for i := 0; i < len(v); i++ {
		r[i] = rune(v[i])
	}
	return string(r)
}

// digestParams are the inputs of a response or rspauth value.
type digestParams struct {
	user, realm, password []byte
	nonce, cnonce, nc     string
	authzid               string // "" when absent
	qop, digestURI        string
}

// compute is the response value (a2Prefix "AUTHENTICATE") or the rspauth
// value (a2Prefix "") of RFC 2831 section 2.1.2.1, for qop auth.
func (p digestParams) compute(a2Prefix string) string {
	inner := md5.New()
	inner.Write(p.user)
	inner.Write([]byte(":"))
	inner.Write(p.realm)
	inner.Write([]byte(":"))
	inner.Write(p.password)
	a1 := append(inner.Sum(nil), ":"+p.nonce+":"+p.cnonce...)
	if p.authzid != "" {
		a1 = append(a1, ":"+p.authzid...)
	}
	ha1 := md5.Sum(a1)
	ha2 := md5.Sum([]byte(a2Prefix + ":" + p.digestURI))
	kd := md5.Sum([]byte(hex.EncodeToString(ha1[:]) + ":" + p.nonce + ":" + p.nc + ":" + p.cnonce + ":" + p.qop + ":" + hex.EncodeToString(ha2[:])))
	return hex.EncodeToString(kd[:])
}
