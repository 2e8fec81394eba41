// Package jaas reads JAAS login configuration files, the format Java's
// javax.security.auth.login.ConfigFile reads and ZooKeeper and Kafka take
// their SASL users from:
//
//	// comment            /* comment */
//	Server {
//	    org.apache.zookeeper.server.auth.DigestLoginModule required
//	    user_alice="alice-secret"
//	    user_bob="bob-secret";
//	};
//	Client {
//	    org.apache.zookeeper.server.auth.DigestLoginModule required
//	    username="alice" password="alice-secret";
//	};
//
// A file is a list of sections (an application name, then its login
// module entries in braces, then ';'); an entry is a login module class
// name, a control flag (required, requisite, sufficient, optional: any
// case) and key=value options, ended by ';'. Values are words or quoted
// strings ("...", with backslash escapes as Java's StreamTokenizer reads
// them). A section without entries is dropped, as Java does; the compat
// test compares Parse with Java's ConfigFile. ParseEntries reads the entries alone, the
// form of Kafka's inline sasl.jaas.config.
//
// Not done: Java's ${property} expansion in values (a value keeps the text
// as written).
//
// JVMProperty finds a -Dname=value system property in JVM flags as the
// ZooKeeper scripts pass them (SERVER_JVMFLAGS, JVMFLAGS): how users name
// the JAAS file (-Djava.security.auth.login.config=...).
package jaas
