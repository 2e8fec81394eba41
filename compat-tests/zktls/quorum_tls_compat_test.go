//go:build compat

package zktls

import (
	"crypto/x509/pkix"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// withoutProbes drops the lines of the readiness probes from a log.
func withoutProbes(log string) string {
	var keep []string
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, "srvr") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestQuorumTLSEnsembles: the same quorum TLS zoo.cfg lines (sslQuorum,
// ssl.quorum.* with PKCS12 stores, each server its own certificate,
// portUnification and sslQuorumReloadCertFiles; Apache ZooKeeper needs
// the Netty jars for its TLS context) are accepted by a 3-server
// Apache ZooKeeper ensemble and a 3-server zkafka ensemble, which each
// elect a leader and replicate a write. (The two cannot be mixed: their
// peer protocols differ.)
func TestQuorumTLSEnsembles(t *testing.T) {
	pki := keystoretest.NewPKI(t, "zkafka quorum CA")
	dir := t.TempDir()
	trust := keystoretest.WritePKCS12Trust(t, dir, "trust.p12", "secret", pki.CA)
	perServer := func(id uint64) []string {
		cert := keystoretest.Leaf(t, pki.CA, pkix.Name{CommonName: fmt.Sprintf("zookeeper-%d", id)})
		key := keystoretest.WritePKCS12(t, dir, fmt.Sprintf("server%d.p12", id), "secret", cert, pki.CA)
		return []string{"ssl.quorum.keyStore.location=" + key, "ssl.quorum.keyStore.password=secret", "ssl.quorum.keyStore.type=PKCS12"}
	}
	common := []string{
		"sslQuorum=true", "portUnification=false", "sslQuorumReloadCertFiles=false",
		"ssl.quorum.trustStore.location=" + trust, "ssl.quorum.trustStore.password=secret", "ssl.quorum.trustStore.type=PKCS12",
		"ssl.quorum.hostnameVerification=true", "ssl.quorum.enabledProtocols=TLSv1.2,TLSv1.3",
	}
	for _, kind := range []string{"apache", "zkafka"} {
		t.Run(kind, func(t *testing.T) {
			opts := zkserver.EnsembleOptions{Voters: 3, PerServer: perServer,
				Options: zkserver.Options{ApacheClassPath: zkserver.NettyJars, ExtraConfig: common, FourLetterWords: []string{"srvr", "ruok"}, StartTimeout: 60 * time.Second}}
			var e *zkserver.Ensemble
			if kind == "apache" {
				e = zkserver.NewApacheEnsemble(t, opts)
			} else {
				e = zkserver.NewZkafkaEnsemble(t, opts)
			}
			for _, s := range e.Servers {
				s.Launch()
			}
			leader := e.WaitLeader(60 * time.Second)
			if leader == nil {
				for _, s := range e.Servers {
					t.Logf("server %d's log without the srvr probes:\n%s", s.ID(), withoutProbes(s.LogTail(400)))
				}
				t.Fatal("no leader over quorum TLS")
			}
			c, _, err := zk.Connect([]string{leader.Addr()}, 10*time.Second, zk.WithLogger(zkserver.QuietLogger), zk.WithLogInfo(false))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Create("/quorum-tls", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatalf("write through the leader: %v", err)
			}
			for _, s := range e.Servers {
				fc, _, err := zk.Connect([]string{s.Addr()}, 10*time.Second, zk.WithLogger(zkserver.QuietLogger), zk.WithLogInfo(false))
				if err != nil {
					t.Fatal(err)
				}
				ok := false
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !ok; time.Sleep(50 * time.Millisecond) {
					ok, _, _ = fc.Exists("/quorum-tls")
				}
				fc.Close()
				if !ok {
					t.Fatalf("server %d does not have the write", s.ID())
				}
			}
			said := map[string]string{"apache": "Using TLS encrypted quorum communication", "zkafka": "peer transport over TLS"}[kind]
			for _, s := range e.Servers {
				if !strings.Contains(s.LogTail(4000), said) {
					t.Fatalf("server %d's log does not say its quorum runs over TLS (%q)", s.ID(), said)
				}
			}
		})
	}
}
