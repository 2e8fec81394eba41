package quorum

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"

	"github.com/zkafka/zkafka/internal/x509name"
	"github.com/zkafka/zkafka/zkproto"
)

// The secure client port (secureClientPort): the same ZooKeeper protocol
// inside TLS, as ZooKeeper's NettyServerCnxnFactory serves it. The
// listener's accept loop wraps each connection in tls.Server; the
// handshake runs in the connection's own goroutine (conn.serve), so a slow
// client holds up nobody, and bounded by the same deadline as a client's
// first bytes.

// listenSecure opens the TLS listener of cfg, if it has a secure port.
// given, if not nil, is a listener a test made.
func listenSecure(cfg Config, given net.Listener) (net.Listener, *tls.Config, error) {
	if cfg.SecureClientPort == 0 && given == nil {
		return nil, nil, nil
	}
	tc, err := cfg.TLS.serverTLS()
	if err != nil {
		return nil, nil, err
	}
	if given != nil {
		return given, tc, nil
	}
	l, err := net.Listen("tcp", cfg.SecureClientAddr())
	if err != nil {
		return nil, nil, fmt.Errorf("secure client port: %w", err)
	}
	return l, tc, nil
}

// serveSecure accepts TLS clients on l until Shutdown.
func (s *Server) serveSecure(l net.Listener, tc *tls.Config) error {
	err := s.serve(l, "zookeeper TLS clients", func(nc net.Conn) { s.accept(tls.Server(nc, tc)) })
	if err != nil && err != ErrServerClosed {
		return err
	}
	return nil
}

// SecureAddr is the TLS client listener's address (nil without one).
func (s *Server) SecureAddr() net.Addr { return s.secureAddr }

// tlsHandshake completes the handshake of a TLS connection and gives it
// the x509 identity of its client certificate, as ZooKeeper's
// X509AuthenticationProvider does: the subject DN as
// X500Principal.getName() writes it, and super when it is
// X509AuthenticationProvider.superUser. It reports false when the
// handshake fails (no certificate under ssl.clientAuth=need, an untrusted
// one, a client that does not speak TLS).
func (c *conn) tlsHandshake() bool {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(c.life, c.srv.cfg.TickTime*10)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.srv.log.Warn("TLS handshake failed; closing", "remote", c.nc.RemoteAddr().String(), "err", err)
		return false
	}
	if certs := tc.ConnectionState().PeerCertificates; len(certs) > 0 {
		dn := x509name.RFC2253(certs[0])
		super := c.srv.cfg.X509SuperUser != "" && dn == c.srv.cfg.X509SuperUser
		if super {
			c.addIdentity(zkproto.ID{Scheme: "super", ID: dn}, true)
		}
		c.addIdentity(zkproto.ID{Scheme: "x509", ID: dn}, super)
	}
	return true
}
