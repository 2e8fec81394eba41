package x509name

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"strings"
)

// rfc2253Keywords are the attribute names Java's X500Principal.getName()
// (RFC 2253 format) writes; any other attribute is OID=#hex of its DER.
var rfc2253Keywords = map[string]string{
	"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST",
	"2.5.4.10": "O", "2.5.4.11": "OU", "2.5.4.9": "STREET",
	"0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID",
}

// RFC2253 is the certificate's subject as X500Principal.getName() gives
// it: the RDNs last to first, "," between them, "+" inside one.
func RFC2253(cert *x509.Certificate) string {
	var seq pkix.RDNSequence
	if _, err := asn1.Unmarshal(cert.RawSubject, &seq); err != nil {
		return cert.Subject.String()
	}
	var raw asn1.RawValue
	asn1.Unmarshal(cert.RawSubject, &raw)
	rdns := rawRDNs(raw.Bytes)
	var b strings.Builder
	for i := len(seq) - 1; i >= 0; i-- {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		for j, atv := range seq[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			b.WriteString(formatATV(atv, rawATV(rdns, i, j)))
		}
	}
	return b.String()
}

func formatATV(atv pkix.AttributeTypeAndValue, der []byte) string {
	oid := atv.Type.String()
	name, known := rfc2253Keywords[oid]
	if s, ok := atv.Value.(string); ok && known {
		return name + "=" + escapeRFC2253(s)
	}
	return oid + "=#" + hex.EncodeToString(der)
}

// escapeRFC2253 escapes as Java's AVA.toRFC2253String does: RFC 2253's
// specials anywhere (Java adds '=' and '#', which RFC 2253 escapes only
// in front), and a leading or trailing space.
func escapeRFC2253(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case strings.ContainsRune(",=+<>#;\"\\", r),
			i == 0 && r == ' ',
			i == len(s)-1 && r == ' ':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// rawRDNs splits the DER of an RDNSequence's content into its SETs, each
// split into the DER of its values, for the #hex form.
func rawRDNs(content []byte) [][][]byte {
	var out [][][]byte
	for len(content) > 0 {
		var set asn1.RawValue
		rest, err := asn1.Unmarshal(content, &set)
		if err != nil {
			return out
		}
		content = rest
		var vals [][]byte
		inner := set.Bytes
		for len(inner) > 0 {
			var atv asn1.RawValue
			r, err := asn1.Unmarshal(inner, &atv)
			if err != nil {
				break
			}
			inner = r
			// atv is SEQUENCE { type OID, value ANY }: skip the OID.
			var oid asn1.RawValue
			if v, err := asn1.Unmarshal(atv.Bytes, &oid); err == nil {
				vals = append(vals, v)
			}
		}
		out = append(out, vals)
	}
	return out
}

func rawATV(rdns [][][]byte, i, j int) []byte {
	if i < len(rdns) && j < len(rdns[i]) {
		return rdns[i][j]
	}
	return nil
}
