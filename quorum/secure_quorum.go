package quorum

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/zkafka/zkafka/internal/keystore"
)

// Quorum TLS (sslQuorum=true): the peer transport's connections run
// inside TLS with the ssl.quorum.* stores, as ZooKeeper's quorum
// connections do with QuorumX509Util. Both sides show their certificate:
// a server dialing a peer checks the peer's against the trust store (and,
// with ssl.quorum.hostnameVerification, that it names the server.N host);
// a server accepting a peer asks for the peer's certificate as
// ssl.quorum.clientAuth says (need by default) and checks it against the
// trust store. A handshake that fails (an untrusted certificate, a peer
// without TLS) closes the connection with a line in the log. The hello
// and the frames are the same inside TLS. With portUnification=true the
// peer port takes both TLS and plain peers (the first byte tells a TLS
// ClientHello from a hello), with sslQuorum on or off, so an ensemble can
// turn sslQuorum on one server at a time (portUnification on everywhere
// first, then sslQuorum on each server, then portUnification off). With
// sslQuorumReloadCertFiles=true, store files that change are read again
// for the next connections (quorumStores).

// peerTLS is the TLS of the peer transport (nil: plain TCP).
type peerTLS struct {
	stores *quorumStores
	// dial: connections this server dials use TLS (sslQuorum).
	// acceptPlain: the peer port takes plain peers too (portUnification,
	// or sslQuorum off with portUnification: TLS peers are taken too).
	dial, acceptPlain bool
}

// tlsRecordHandshake is the first byte of a TLS ClientHello record.
const tlsRecordHandshake = 0x16

// quorumTLS loads the ssl.quorum.* stores when sslQuorum is on, or when
// portUnification is on with a key store (a server not yet dialing TLS
// takes the TLS peers of a rolling change).
func (c Config) quorumTLS(log *slog.Logger) (*peerTLS, error) {
	if !c.SSLQuorum && !(c.QuorumPortUnification && c.QuorumTLS.KeyStore != "") {
		return nil, nil
	}
	st := &quorumStores{cfg: c.QuorumTLS, reload: c.QuorumReloadCertFiles, log: log}
	if err := st.load(); err != nil {
		return nil, err
	}
	return &peerTLS{stores: st, dial: c.SSLQuorum, acceptPlain: c.QuorumPortUnification || !c.SSLQuorum}, nil
}

// quorumStores are the loaded ssl.quorum.* stores. With reload
// (sslQuorumReloadCertFiles) a new connection first checks whether the
// files changed (modification time or size) and reads them again; stores
// that do not load then are logged and the ones before kept, as
// ZooKeeper's X509Util keeps its context when a reload fails.
type quorumStores struct {
	cfg    TLSConfig
	reload bool
	log    *slog.Logger

	mu struct {
		sync.Mutex
		stamp string // the files' sizes and modification times when loaded
		cert  tls.Certificate
		roots *x509.CertPool // nil: the system's roots, as Java's default trust store
	}
}

// load reads the stores (st.mu not held).
func (st *quorumStores) load() error {
	t := st.cfg
	cert, err := keystore.LoadKeyPair(t.KeyStore, t.KeyStorePassword, t.KeyStoreType)
	if err != nil {
		return fmt.Errorf("ssl.quorum.keyStore: %w", err)
	}
	var roots *x509.CertPool
	if t.TrustStore != "" {
		if roots, err = keystore.LoadTrustPool(t.TrustStore, t.TrustStorePassword, t.TrustStoreType); err != nil {
			return fmt.Errorf("ssl.quorum.trustStore: %w", err)
		}
	}
	stamp := st.stamp()
	st.mu.Lock()
	st.mu.stamp, st.mu.cert, st.mu.roots = stamp, cert, roots
	st.mu.Unlock()
	return nil
}

// stamp describes the store files as they are now.
func (st *quorumStores) stamp() string {
	var b strings.Builder
	for _, f := range []string{st.cfg.KeyStore, st.cfg.TrustStore} {
		if f == "" {
			continue
		}
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%s %d %d;", f, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// current returns the certificate and roots to use for a new connection,
// reading changed files first when reloading is on.
func (st *quorumStores) current() (tls.Certificate, *x509.CertPool) {
	if st.reload {
		now := st.stamp() // file IO, before the lock
		st.mu.Lock()
		changed := st.mu.stamp != now
		st.mu.Unlock()
		if changed {
			if err := st.load(); err != nil {
				st.log.Warn("quorum TLS stores changed but do not load; keeping the ones loaded before", "err", err)
				st.mu.Lock()
				st.mu.stamp = now // not again until they change again
				st.mu.Unlock()
			} else {
				st.log.Info("quorum TLS stores reloaded (sslQuorumReloadCertFiles)")
			}
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.mu.cert, st.mu.roots
}

func (st *quorumStores) base(cert tls.Certificate) *tls.Config {
	t := st.cfg
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: t.MinVersion, MaxVersion: t.MaxVersion, CipherSuites: t.CipherSuites}
}

// server is the TLS configuration of an inbound peer connection.
func (st *quorumStores) server() *tls.Config {
	cert, roots := st.current()
	c := st.base(cert)
	c.ClientAuth, c.ClientCAs = st.cfg.ClientAuth, roots
	return c
}

// client is the TLS configuration of a connection dialed to addr.
func (st *quorumStores) client(addr string) *tls.Config {
	cert, roots := st.current()
	c := st.base(cert)
	c.RootCAs = roots
	c.ServerName, _, _ = net.SplitHostPort(addr)
	if !st.cfg.HostnameVerification {
		// Check the chain, not the name.
		keystore.CheckChainOnly(c, roots, "the peer")
	}
	return c
}

// secureInbound returns the connection to read an inbound peer from: nc
// itself without quorum TLS, else the TLS server side once its handshake
// is done (within peerHelloTimeout). ok is false when the handshake
// failed; the reason is logged.
func (t *peerTransport) secureInbound(nc net.Conn) (net.Conn, bool) {
	if t.tls == nil {
		return nc, true
	}
	nc.SetReadDeadline(time.Now().Add(peerHelloTimeout))
	defer nc.SetReadDeadline(time.Time{})
	rd := nc
	if t.tls.acceptPlain {
		br := bufio.NewReaderSize(nc, 512)
		first, err := br.Peek(1)
		if err != nil {
			return nil, false
		}
		rd = &peekedConn{Conn: nc, br: br}
		if first[0] != tlsRecordHandshake {
			return rd, true // a plain peer (portUnification)
		}
	}
	tc := tls.Server(rd, t.tls.stores.server())
	ctx, cancel := context.WithTimeout(context.Background(), peerHelloTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		t.refused.note("TLS handshake with a connecting peer failed (sslQuorum); connection closed",
			"remote", nc.RemoteAddr().String(), "err", err)
		return nil, false
	}
	return tc, true
}

// secureOutbound wraps a connection this server dialed to the peer at
// addr in TLS and completes the handshake; without quorum TLS it returns
// nc. On an error nc is closed and the reason logged.
func (t *peerTransport) secureOutbound(nc net.Conn, id uint64, addr string) (net.Conn, error) {
	if t.tls == nil || !t.tls.dial {
		return nc, nil
	}
	tc := tls.Client(nc, t.tls.stores.client(addr))
	ctx, cancel := context.WithTimeout(context.Background(), peerHelloTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		t.refused.note("TLS handshake with a peer this server dialed failed (sslQuorum)", "peer", id, "addr", addr, "err", err)
		return nil, err
	}
	return tc, nil
}

// peekedConn reads through the buffer that peeked at its first byte.
type peekedConn struct {
	net.Conn
	br *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.br.Read(p) }
