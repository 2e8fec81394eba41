package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
)

// writeKeystore makes a self-signed ECDSA P-256 certificate for 127.0.0.1
// and writes it with its key as a PEM keystore (what both servers read);
// the pool trusts it.
func writeKeystore(dir string) (string, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "tlsbench"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", nil, err
	}
	data := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	path := filepath.Join(dir, "keystore.pem")
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return path, pool, os.WriteFile(path, data, 0o600)
}

// servers are zkafka's ZooKeeper (clientPort and secureClientPort) and
// one broker (PLAINTEXT and SSL listeners), each its own process.
type servers struct {
	zk, broker           *benchkit.Proc
	zkPlain, zkTLS       string
	kafkaPlain, kafkaTLS string
}

func freeAddr() (string, error) {
	p, err := benchkit.FreePort()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), err
}

func startServers(bin, dir, keystore string) (*servers, error) {
	s := &servers{}
	var err error
	for _, a := range []*string{&s.zkPlain, &s.zkTLS, &s.kafkaPlain, &s.kafkaTLS} {
		if *a, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	_, zkPort, _ := net.SplitHostPort(s.zkPlain)
	_, zkTLSPort, _ := net.SplitHostPort(s.zkTLS)
	zooCfg := filepath.Join(dir, "zoo.cfg")
	cfg := fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=%s\nclientPortAddress=127.0.0.1\nsecureClientPort=%s\n"+
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\nssl.keyStore.location=%s\nssl.keyStore.type=PEM\n"+
		"ssl.clientAuth=none\nmaxClientCnxns=0\nadmin.enableServer=false\n", filepath.Join(dir, "zookeeper"), zkPort, zkTLSPort, keystore)
	if err := os.WriteFile(zooCfg, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	if s.zk, err = benchkit.Start("zkafka zookeeper", filepath.Join(dir, "zookeeper.log"), dir, bin, "zookeeper", "-log-level", "warn", zooCfg); err != nil {
		return nil, err
	}
	if err := s.zk.WaitReady(30*time.Second, benchkit.DialReady(s.zkTLS)); err != nil {
		s.stop()
		return nil, fmt.Errorf("zookeeper: %w\n%s", err, s.zk.Tail(10))
	}
	props := filepath.Join(dir, "server.properties")
	p := fmt.Sprintf("broker.id=0\nlisteners=PLAINTEXT://%s,SSL://%s\nlog.dirs=%s\nzookeeper.connect=%s/kafka\n"+
		"ssl.keystore.type=PEM\nssl.keystore.location=%s\n", s.kafkaPlain, s.kafkaTLS, filepath.Join(dir, "kafka-logs"), s.zkPlain, keystore)
	if err := os.WriteFile(props, []byte(p), 0o644); err != nil {
		s.stop()
		return nil, err
	}
	if s.broker, err = benchkit.Start("zkafka broker", filepath.Join(dir, "broker.log"), dir, bin, "broker", "-log-level", "warn", props); err != nil {
		s.stop()
		return nil, err
	}
	if err := s.broker.WaitReady(30*time.Second, benchkit.DialReady(s.kafkaTLS)); err != nil {
		s.stop()
		return nil, fmt.Errorf("broker: %w\n%s", err, s.broker.Tail(10))
	}
	return s, nil
}

func (s *servers) stop() {
	if s.broker != nil {
		s.broker.Stop(15 * time.Second)
		s.broker = nil
	}
	if s.zk != nil {
		s.zk.Stop(15 * time.Second)
		s.zk = nil
	}
}
