// Package zksasl holds the compat tests of client SASL (DIGEST-MD5) and
// of enforced authentication, run against Apache ZooKeeper 3.8 and zkafka
// with the same zoo.cfg and JAAS file (given as users give it, with
// -Djava.security.auth.login.config in SERVER_JVMFLAGS; zkafka also
// through its zoo.cfg key zkafka.jaasConfigFile): kazoo's sasl_options and
// zkCli.sh with a JAAS Client section, sasl ACLs, zookeeper.superUser,
// enforce.auth.enabled/enforce.auth.schemes, sessionRequireClientSASLAuth
// and the no-op requireClientAuthScheme, and the differential run with SASL
// configured on both servers, and the bytes of the sasl replies (the
// challenge but its nonce, the failures whole). The tests carry the compat build
// tag (they need java, zookeeper and python3-kazoo); compat-part.sh wires
// them into compat-tests/compat.sh.
package zksasl
