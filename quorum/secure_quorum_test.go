package quorum

import (
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// quorumTLSPeer is how one member of a test ensemble does quorum TLS.
type quorumTLSPeer struct {
	cert        *keystoretest.Cert // its own certificate
	trust       *keystoretest.Cert // the CA it trusts
	typ         string             // "PEM", "PKCS12" or "JKS" (keytool's stores; cert and trust unused)
	sslQuorum   bool
	unification bool // portUnification
}

// startTLSEnsemble starts one in-process server per peer, each with its
// own key store; the logs are returned per server.
func startTLSEnsemble(t *testing.T, peers []quorumTLSPeer) (*inprocEnsemble, []*lockedBuffer) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		ens, logs, err := tryTLSEnsemble(t, peers)
		if err == nil {
			return ens, logs
		}
		if !errors.Is(err, syscall.EADDRINUSE) || attempt == 5 {
			t.Fatal(err)
		}
	}
}

func tryTLSEnsemble(t *testing.T, peers []quorumTLSPeer) (*inprocEnsemble, []*lockedBuffer, error) {
	specs := make([]ServerSpec, len(peers))
	for i := range peers {
		specs[i] = ServerSpec{ID: uint64(i + 1), Host: "127.0.0.1", PeerPort: inprocFreePort(t)}
	}
	ens := &inprocEnsemble{stopped: make([]bool, len(peers))}
	var logs []*lockedBuffer
	root := t.TempDir()
	for i, p := range peers {
		dir := filepath.Join(root, fmt.Sprint(i+1))
		cfg := DefaultConfig(dir)
		cfg.TickTime = 200 * time.Millisecond
		cfg.MyID, cfg.Servers = uint64(i+1), specs
		cfg.SSLQuorum, cfg.QuorumPortUnification = p.sslQuorum, p.unification
		cfg.QuorumTLS = writeQuorumStores(t, t.TempDir(), p)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		buf := &lockedBuffer{}
		s, err := start(cfg, slog.New(slog.NewTextHandler(buf, nil)), l, startOptions{})
		if err != nil {
			l.Close()
			for _, started := range ens.servers {
				started.Close()
			}
			return nil, nil, fmt.Errorf("server %d: %w", i+1, err)
		}
		t.Cleanup(func() { s.Close() })
		ens.servers = append(ens.servers, s)
		logs = append(logs, buf)
	}
	return ens, logs, nil
}

// writeQuorumStores writes p's key and trust stores into dir.
func writeQuorumStores(t *testing.T, dir string, p quorumTLSPeer) TLSConfig {
	tc := defaultTLSConfig()
	tc.KeyStoreType, tc.TrustStoreType = p.typ, p.typ
	switch p.typ {
	case "JKS": // the keytool-made stores of internal/keystore's TestJKS
		tc.KeyStore, tc.TrustStore = "../internal/keystore/testdata/keystore.jks", "../internal/keystore/testdata/truststore.jks"
		tc.KeyStorePassword, tc.TrustStorePassword = "changeit", "changeit"
	case "PKCS12":
		tc.KeyStore = keystoretest.WritePKCS12(t, dir, "quorum.p12", "pw", p.cert, p.trust)
		tc.TrustStore = keystoretest.WritePKCS12Trust(t, dir, "trust.p12", "pw", p.trust)
		tc.KeyStorePassword, tc.TrustStorePassword = "pw", "pw"
	default:
		tc.KeyStore = keystoretest.WritePEM(t, dir, "quorum.pem", p.cert)
		tc.TrustStore = keystoretest.WriteCertPEM(t, dir, "trust.pem", p.trust)
	}
	return tc
}

func peerCert(t *testing.T, ca *keystoretest.Cert, id int) *keystoretest.Cert {
	return keystoretest.Leaf(t, ca, pkix.Name{CommonName: "zookeeper-" + strconv.Itoa(id), Organization: []string{"zkafka"}})
}

// replicates writes through the leader and reads the node on every server
// not stopped.
func replicates(t *testing.T, ens *inprocEnsemble, path string) {
	t.Helper()
	leader := ens.waitLeader(t)
	c := connectZK(t, ens.servers[leader])
	roundTrip(t, c, path)
	for i, s := range ens.servers {
		if ens.stopped[i] {
			continue
		}
		checkFor(t, fmt.Sprintf("%s on server %d", path, i+1), func() bool {
			_, _, err := s.tree.Load().Get(path)
			return err == 0
		})
	}
}

// plainHelloRefused dials s's peer port without TLS, sends a hello naming
// server id, and reports whether the server closed the connection.
func plainHelloRefused(t *testing.T, s *Server, id uint64) bool {
	t.Helper()
	nc, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.cfg.Servers[s.cfg.MyID-1].PeerPort)))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	hello := binary.BigEndian.AppendUint64(append([]byte(peerMagic), peerVersion), id)
	nc.Write(hello)
	nc.SetReadDeadline(time.Now().Add(peerHelloTimeout + time.Second))
	_, err = nc.Read(make([]byte, 1))
	return err != nil && !errors.Is(err, errTimeout(err))
}

// errTimeout is err itself when it is a timeout (so errors.Is matches),
// else a sentinel that matches nothing.
func errTimeout(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return err
	}
	return errNever
}

var errNever = errors.New("never")

// TestQuorumTLS: three servers, each with its own certificate (PEM and
// PKCS12 stores) from one CA, elect a leader and replicate over TLS; a
// peer that speaks plain TCP is refused, with a line in the log.
func TestQuorumTLS(t *testing.T) {
	pki := keystoretest.NewPKI(t, "zkafka quorum CA")
	var peers []quorumTLSPeer
	for i, typ := range []string{"PEM", "PKCS12", "PEM"} {
		peers = append(peers, quorumTLSPeer{cert: peerCert(t, pki.CA, i+1), trust: pki.CA, typ: typ, sslQuorum: true})
	}
	ens, logs := startTLSEnsemble(t, peers)
	replicates(t, ens, "/over-quorum-tls")
	if !plainHelloRefused(t, ens.servers[0], 2) {
		t.Fatal("a plain peer connection was not closed")
	}
	checkFor(t, "the refusal in the log", func() bool {
		return strings.Contains(logs[0].String(), "TLS handshake with a connecting peer failed")
	})
}

// TestQuorumTLSJKS: the servers share keytool's JKS key store (a
// self-signed certificate for 127.0.0.1) and its JKS trust store.
func TestQuorumTLSJKS(t *testing.T) {
	peers := make([]quorumTLSPeer, 3)
	for i := range peers {
		peers[i] = quorumTLSPeer{typ: "JKS", sslQuorum: true}
	}
	ens, _ := startTLSEnsemble(t, peers)
	replicates(t, ens, "/over-jks")
}

// TestQuorumTLSUntrustedPeer: a server whose certificate comes from
// another CA is refused by the others (a line in their logs names its
// address) and never joins; the two others go on as a quorum.
func TestQuorumTLSUntrustedPeer(t *testing.T) {
	pki, rogue := keystoretest.NewPKI(t, "zkafka quorum CA"), keystoretest.NewPKI(t, "another CA")
	peers := []quorumTLSPeer{
		{cert: peerCert(t, pki.CA, 1), trust: pki.CA, typ: "PEM", sslQuorum: true},
		{cert: peerCert(t, pki.CA, 2), trust: pki.CA, typ: "PEM", sslQuorum: true},
		{cert: peerCert(t, rogue.CA, 3), trust: pki.CA, typ: "PEM", sslQuorum: true},
	}
	ens, logs := startTLSEnsemble(t, peers)
	ens.stopped[2] = true // not part of the agreement
	replicates(t, ens, "/without-the-rogue")
	for i := range 2 {
		checkFor(t, fmt.Sprintf("server %d's refusal of the untrusted peer", i+1), func() bool {
			l := lineWith(logs[i].String(), "TLS handshake", "failed")
			return l != "" && (strings.Contains(l, "certificate") || strings.Contains(l, "x509"))
		})
	}
	// The rogue never hears of the write (it never had a leader).
	if pollFor(2*time.Second, func() bool { _, _, err := ens.servers[2].tree.Load().Get("/without-the-rogue"); return err == 0 }) {
		t.Fatal("the server with an untrusted certificate got the write")
	}
	if ens.servers[2].ens.leader.Load() != 0 {
		t.Fatal("the server with an untrusted certificate knows a leader")
	}
}

// TestQuorumTLSRollingChange: with portUnification, a server that does
// not dial TLS yet (sslQuorum=false) and servers that do form one
// ensemble: the step of a rolling change to quorum TLS.
func TestQuorumTLSRollingChange(t *testing.T) {
	pki := keystoretest.NewPKI(t, "zkafka quorum CA")
	peers := []quorumTLSPeer{
		{cert: peerCert(t, pki.CA, 1), trust: pki.CA, typ: "PEM", sslQuorum: true, unification: true},
		{cert: peerCert(t, pki.CA, 2), trust: pki.CA, typ: "PEM", sslQuorum: true, unification: true},
		{cert: peerCert(t, pki.CA, 3), trust: pki.CA, typ: "PEM", sslQuorum: false, unification: true},
	}
	ens, _ := startTLSEnsemble(t, peers)
	replicates(t, ens, "/rolling")
	if plainHelloRefused(t, ens.servers[0], 3) {
		t.Fatal("portUnification: a plain peer was refused")
	}
}

func TestQuorumTLSConfig(t *testing.T) {
	c, _, err := parseZooCfg(t, "sslQuorum=true\nssl.quorum.keyStore.location=/q.p12\nssl.quorum.keyStore.type=PKCS12\n"+
		"ssl.quorum.trustStore.location=/t.jks\nssl.quorum.trustStore.password=pw\nssl.quorum.clientAuth=want\n"+
		"ssl.quorum.hostnameVerification=false\nssl.quorum.enabledProtocols=TLSv1.3\nportUnification=true\nsslQuorumReloadCertFiles=true\n"+
		"ssl.quorum.crl=false\nssl.keyStore.location=/client.p12")
	if err != nil {
		t.Fatal(err)
	}
	if !c.QuorumReloadCertFiles {
		t.Fatal("sslQuorumReloadCertFiles=true not read")
	}
	q := c.QuorumTLS
	if !c.SSLQuorum || !c.QuorumPortUnification || q.KeyStore != "/q.p12" || q.TrustStore != "/t.jks" || q.TrustStorePassword != "pw" ||
		q.HostnameVerification || q.MinVersion != 0x0304 || c.TLS.KeyStore != "/client.p12" || c.TLS.KeyStoreType != "" {
		t.Fatalf("%+v", c)
	}
	if _, _, err := parseZooCfg(t, "sslQuorum=true"); err == nil || !strings.Contains(err.Error(), "ssl.quorum.keyStore.location") {
		t.Fatalf("sslQuorum without a key store: %v", err)
	}
	if _, _, err := parseZooCfg(t, "sslQuorum=yes"); err == nil {
		t.Fatal("sslQuorum=yes was taken")
	}
}

// TestQuorumTLSBadStoreFailsStart: a quorum key store that cannot be read
// stops the start, naming the key.
func TestQuorumTLSBadStoreFailsStart(t *testing.T) {
	cfg := DefaultConfig(t.TempDir())
	cfg.MyID = 1
	cfg.Servers = []ServerSpec{{ID: 1, Host: "127.0.0.1", PeerPort: inprocFreePort(t)}, {ID: 2, Host: "127.0.0.1", PeerPort: inprocFreePort(t)}}
	cfg.SSLQuorum = true
	cfg.QuorumTLS.KeyStore = filepath.Join(t.TempDir(), "missing.p12")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err := start(cfg, slog.New(slog.DiscardHandler), l, startOptions{})
	if err == nil {
		s.Close()
		t.Fatal("started without its quorum key store")
	}
	if !strings.Contains(err.Error(), "ssl.quorum.keyStore") {
		t.Fatalf("error %v does not name ssl.quorum.keyStore", err)
	}
}

// TestQuorumStoresReload: with sslQuorumReloadCertFiles a changed key
// store is used for the next connections; one that does not load is
// logged and the one before kept; without it the first stays.
func TestQuorumStoresReload(t *testing.T) {
	pki := keystoretest.NewPKI(t, "zkafka quorum CA")
	dir := t.TempDir()
	first, second := peerCert(t, pki.CA, 1), peerCert(t, pki.CA, 2)
	for _, reload := range []bool{true, false} {
		key := keystoretest.WritePEM(t, dir, "key.pem", first)
		tc := defaultTLSConfig()
		tc.KeyStore, tc.TrustStore = key, keystoretest.WriteCertPEM(t, dir, "trust.pem", pki.CA)
		logs := &lockedBuffer{}
		st := &quorumStores{cfg: tc, reload: reload, log: slog.New(slog.NewTextHandler(logs, nil))}
		if err := st.load(); err != nil {
			t.Fatal(err)
		}
		subject := func() string { return st.server().Certificates[0].Leaf.Subject.CommonName }
		later := time.Now().Add(time.Hour)
		rewrite := func(data []byte) {
			t.Helper()
			if err := os.WriteFile(key, data, 0o600); err != nil {
				t.Fatal(err)
			}
			later = later.Add(time.Minute) // a modification time that surely differs
			if err := os.Chtimes(key, later, later); err != nil {
				t.Fatal(err)
			}
		}
		pemOf := func(c *keystoretest.Cert) []byte {
			b, err := os.ReadFile(keystoretest.WritePEM(t, t.TempDir(), "k.pem", c))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		rewrite(pemOf(second))
		want := map[bool]string{true: "zookeeper-2", false: "zookeeper-1"}[reload]
		if got := subject(); got != want {
			t.Fatalf("reload %v: the certificate after a change is %s, want %s", reload, got, want)
		}
		if !reload {
			continue
		}
		rewrite([]byte("not a key store"))
		if got := subject(); got != "zookeeper-2" || !strings.Contains(logs.String(), "do not load; keeping the ones loaded before") {
			t.Fatalf("a broken store: certificate %s, log:\n%s", got, logs)
		}
		if got := st.client("127.0.0.1:1").Certificates[0].Leaf.Subject.CommonName; got != "zookeeper-2" {
			t.Fatalf("the dialing side uses %s", got)
		}
	}
}
