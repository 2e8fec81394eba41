//go:build compat

package zktls

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// zkCliTLSFlags are the CLIENT_JVMFLAGS of Java's client over TLS (its
// Netty socket, ZooKeeper's zookeeper.ssl.* client properties) with
// alice's certificate; -cp repeats zkCli.sh's class path with the Netty
// jars (the last -cp wins).
func zkCliTLSFlags(t *testing.T, c *keystoretest.PKI) string {
	dir := t.TempDir()
	key := keystoretest.WritePKCS12(t, dir, "alice.p12", "secret", c.Alice, c.CA)
	trust := keystoretest.WritePKCS12Trust(t, dir, "trust.p12", "secret", c.CA)
	cp := strings.Join(append([]string{"/etc/zookeeper/conf", zkserver.ApacheJar, "/usr/share/java/netty-resolver.jar"}, zkserver.NettyJars...), ":")
	return strings.Join([]string{
		"-cp", cp,
		"-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
		"-Dzookeeper.client.secure=true",
		"-Dzookeeper.ssl.keyStore.location=" + key, "-Dzookeeper.ssl.keyStore.password=secret",
		"-Dzookeeper.ssl.keyStore.type=PKCS12",
		"-Dzookeeper.ssl.trustStore.location=" + trust, "-Dzookeeper.ssl.trustStore.password=secret",
		"-Dzookeeper.ssl.trustStore.type=PKCS12",
		"-Dzookeeper.ssl.hostnameVerification=false",
	}, " ")
}

// TestZkCliOverTLS: Java's zkCli.sh on the secure client port of Apache
// ZooKeeper and of zkafka, with the same zoo.cfg and stores: the same
// output for every command, the session's x509 identity in whoami, and
// an auth ACL that becomes alice's x509 identity.
func TestZkCliOverTLS(t *testing.T) {
	c := keystoretest.NewPKI(t, "zkafka compat CA")
	commands := []string{
		"create /tls-cli hello",
		"get /tls-cli",
		"whoami",
		"create /tls-acl mine auth::cdrwa",
		"getAcl /tls-acl",
		"get /tls-acl",
		"ls /",
	}
	flags := zkCliTLSFlags(t, c)
	out := map[string][][]string{}
	for _, kind := range []string{"apache", "zkafka"} {
		start := map[string]func(testing.TB, zkserver.Options) *zkserver.Server{"apache": zkserver.StartApache, "zkafka": zkserver.StartZkafka}[kind]
		port := zkserver.FreePort(t)
		start(t, zkserver.Options{ExtraConfig: zooCfg(t, c, "PKCS12", port),
			FourLetterWords: []string{"srvr", "ruok"}, ApacheClassPath: zkserver.NettyJars})
		out[kind] = zkserver.RunZkCliFlags(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), flags, commands)
	}
	for i, cmd := range commands {
		a, z := out["apache"][i], out["zkafka"][i]
		if !slices.Equal(a, z) {
			t.Errorf("%s:\n apache: %q\n zkafka: %q", cmd, a, z)
		}
	}
	if a := out["apache"]; len(a[0]) == 0 || a[0][0] != "Created /tls-cli" || !slices.Contains(a[2], "x509: CN=alice,O=zkafka") || !slices.Contains(a[4], "'x509,'CN=alice%2CO=zkafka") {
		t.Errorf("zkCli over TLS on Apache did not work as expected: %q", a)
	}
}
