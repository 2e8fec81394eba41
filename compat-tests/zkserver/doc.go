// Package zkserver starts ZooKeeper servers as real processes for tests: Apache
// ZooKeeper 3.8 from Debian's package (the reference) and the zkafka binary's
// `zookeeper` subcommand (the server under test). Both listen on 127.0.0.1 on a
// free port with a fresh data directory under t.TempDir, and both are stopped
// by t.Cleanup.
//
// Usage:
//
//	s := zkserver.StartApache(t, zkserver.Options{ExtendedTypes: true})
//	conn, _, err := zk.Connect([]string{s.Addr()}, 10*time.Second)
//	...
//	s.Restart() // same port, same data directory
//
// Every server gets the same zoo.cfg shape:
//
//	tickTime=2000
//	dataDir=<tempdir>/data
//	clientPort=<free port>
//	clientPortAddress=127.0.0.1
//	maxClientCnxns=0
//	4lw.commands.whitelist=ruok,srvr,...
//	extendedTypesEnabled=true                 (Options.ExtendedTypes)
//	znode.container.checkIntervalMs=<ms>      (Options.ContainerCheckInterval)
//
// Apache ZooKeeper reads the container interval only from the Java system
// property znode.container.checkIntervalMs, so StartApache passes it with -D
// as well; zkafka is expected to read the zoo.cfg key.
//
// A server is ready when `srvr` reports a Mode (ruok is not enough: Apache
// ZooKeeper answers imok before it serves requests), or, when srvr is not in
// the whitelist, when a session handshake succeeds; bounded by
// Options.StartTimeout (30 s by default).
// A process that exits before it is ready fails the test at once, with the
// tail of its log.
//
// Session is a go-zookeeper session on a server, over TLS when given a
// tls.Config (a secureClientPort: FreePort picks one), returned once the
// server has given it a session.
//
// StartApache needs /usr/share/java/zookeeper.jar and a java command; when
// they are missing the test fails with a message saying that `make compat`
// installs them. The tests that use StartApache carry the build tag `compat`,
// so `make test` does not compile them; `make compat` runs them.
package zkserver
