package zkmeta

import (
	"crypto/tls"
	"net"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// Security is how the broker's session is secured, as Kafka's ZooKeeper
// client is: TLS to a secure client port (zookeeper.ssl.client.enable),
// SASL DIGEST-MD5 with the JAAS Client section's user (sasl.go), and the
// ACLs of the znodes it creates (zookeeper.set.acl). The zero value is a
// plaintext, unauthenticated session creating open znodes.
type Security struct {
	// TLS, when set, is the client side of every connection (a
	// ServerName left empty is the host being dialed).
	TLS *tls.Config
	// SASL, when set, authenticates every connection before the session
	// is used.
	SASL *SASLCredentials
	// SecureACLs gives created znodes Kafka's secure ACLs (ACL).
	SecureACLs bool
}

// SASLCredentials are the DIGEST-MD5 user of the JAAS Client section and
// the server's service name (-Dzookeeper.sasl.client.username, "zookeeper").
type SASLCredentials struct {
	User, Password string
	Service        string
}

// sensitiveRoots are Kafka's ZkData.SensitiveRootPaths: their znodes are
// not world-readable even with secure ACLs (credentials).
var sensitiveRoots = []string{"/config/users", "/config/brokers", "/delegation_token"}

// secureACL is Kafka's ZkData.defaultAcls with zookeeper.set.acl: all
// rights to the creator ("auth", which the server turns into the
// session's sasl: or x509: identity) and read to anyone, except on
// sensitive paths (creator only) and on /consumers itself (open, as old
// consumers write under it).
func secureACL(path string) []zk.ACL {
	if path == "/consumers" {
		return OpenACL
	}
	acl := zk.AuthACL(zk.PermAll)
	for _, root := range sensitiveRoots {
		if path == root || strings.HasPrefix(path, root+"/") {
			return acl
		}
	}
	return append(acl, zk.WorldACL(zk.PermRead)...)
}

// ACL is the ACL a znode created at p (chroot-relative) gets.
func (z *Client) ACL(p string) []zk.ACL {
	if z.sec.SecureACLs {
		return secureACL(p)
	}
	return OpenACL
}

// dialer is go-zookeeper's Dialer for sec: TCP, then TLS and SASL as set.
func (sec Security) dialer(failed func(error)) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		d := &net.Dialer{Timeout: timeout}
		var nc net.Conn
		var err error
		if sec.TLS != nil {
			cfg := sec.TLS.Clone()
			if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
				cfg.ServerName, _, _ = net.SplitHostPort(addr)
			}
			nc, err = tls.DialWithDialer(d, network, addr, cfg)
		} else {
			nc, err = d.Dial(network, addr)
		}
		if err != nil || sec.SASL == nil {
			return nc, err
		}
		return &saslConn{Conn: nc, creds: sec.SASL, failed: failed}, nil
	}
}
