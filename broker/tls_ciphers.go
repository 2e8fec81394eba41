package broker

import (
	"crypto/tls"
	"fmt"
	"strings"
)

// ssl.cipher.suites names suites as Java does: the IANA names
// (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256), and
// Java's older SSL_ aliases of the same suites. Go's crypto/tls picks the
// TLS 1.2 suites from the list, but always offers all three TLS 1.3
// suites: a list naming none of them turns TLS 1.3 off (as in Java, where
// no TLS 1.3 suite leaves nothing to negotiate it with), one naming some
// of them offers all three.

// cipherByName maps every suite Go implements to its id.
var cipherByName = func() map[string]*tls.CipherSuite {
	m := map[string]*tls.CipherSuite{}
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		m[cs.Name] = cs
	}
	return m
}()

// cipherSuites maps names to the TLS 1.2 (and older) suite ids and
// whether a TLS 1.3 suite is named. An unknown name is an error naming it.
func cipherSuites(names []string) (ids []uint16, tls13 bool, err error) {
	for _, n := range names {
		cs := cipherByName[n]
		if cs == nil {
			if alias, ok := strings.CutPrefix(n, "SSL_"); ok {
				cs = cipherByName["TLS_"+alias]
			}
		}
		if cs == nil {
			return nil, false, fmt.Errorf("unknown cipher suite %q (want Java/IANA names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or TLS_AES_128_GCM_SHA256)", n)
		}
		if only13(cs) {
			tls13 = true
			continue
		}
		ids = append(ids, cs.ID)
	}
	return ids, tls13, nil
}

func only13(cs *tls.CipherSuite) bool {
	return len(cs.SupportedVersions) == 1 && cs.SupportedVersions[0] == tls.VersionTLS13
}

// applyCipherSuites restricts cfg to s's ssl.cipher.suites: the TLS 1.2
// suites listed, TLS 1.3 only when one of its suites is, TLS 1.2 and
// older only when one of theirs is.
func (s *SSLConfig) applyCipherSuites(cfg *tls.Config) error {
	if len(s.CipherSuites) == 0 {
		return nil
	}
	ids, tls13, err := cipherSuites(s.CipherSuites)
	if err != nil {
		return err
	}
	cfg.CipherSuites = ids
	if !tls13 && cfg.MaxVersion > tls.VersionTLS12 {
		cfg.MaxVersion = tls.VersionTLS12
	}
	if len(ids) == 0 && cfg.MinVersion < tls.VersionTLS13 {
		cfg.MinVersion = tls.VersionTLS13
	}
	if cfg.MinVersion > cfg.MaxVersion {
		return fmt.Errorf("ssl.cipher.suites %s: no suite for the versions of ssl.enabled.protocols", strings.Join(s.CipherSuites, ","))
	}
	return nil
}
