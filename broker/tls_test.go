package broker

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net"
	"testing"
	"time"
)

// selfSigned is a certificate for 127.0.0.1, made for the test.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// TestFetchOverTLSCopiesRecords: on a TLS connection the records of a
// fetch (1 MiB, many times the copy buffer) go through the TLS writer,
// all of them, counted as copied (sendfile would send them unencrypted).
func TestFetchOverTLSCopiesRecords(t *testing.T) {
	b, part := newTestBroker(t)
	var want int
	for range 64 {
		batch := testBatch(16 << 10)
		want += len(batch)
		if res := part.appendBatch(batch, time.Now()); res.code != 0 {
			t.Fatal(res.code)
		}
	}
	cert, pool := selfSigned(t)
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		// The server side of the handshake runs with the client's.
		s, err := l.Accept()
		if err == nil {
			err = s.(*tls.Conn).Handshake()
		}
		if err != nil {
			t.Error(err)
		}
		accepted <- s
	}()
	client, err := tls.Dial("tcp", l.Addr().String(), &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	got := fetchOverConn(t, b, server, client, func(c *conn) { c.tls = true })
	if got != want {
		t.Fatalf("received %d record bytes over TLS, want %d", got, want)
	}
	if n := b.copiedRecordBytes.Load(); n != int64(want) {
		t.Fatalf("copied %d record bytes, want %d", n, want)
	}
}

// TestTLSHandshakeBounded: a client that opens a connection to an SSL
// listener and never sends its hello is closed after tlsHandshakeTimeout.
func TestTLSHandshakeBounded(t *testing.T) {
	defer func(d time.Duration) { tlsHandshakeTimeout = d }(tlsHandshakeTimeout)
	tlsHandshakeTimeout = 50 * time.Millisecond
	b, _ := newTestBroker(t)
	cert, _ := selfSigned(t)
	server, client := net.Pipe()
	defer client.Close()
	c := newConn(b, tls.Server(server, &tls.Config{Certificates: []tls.Certificate{cert}}))
	c.tls = true
	done := make(chan struct{})
	go func() { c.serve(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a silent client held the TLS handshake open for 10 s")
	}
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := client.Read(make([]byte, 1)); err == nil {
		t.Fatal("connection still open after the handshake timed out")
	}
}
