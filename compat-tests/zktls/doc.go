// Package zktls checks the secure client port (secureClientPort, ssl.*)
// against Apache ZooKeeper 3.8 and the zkafka binary with the same zoo.cfg
// and key stores: a go-zookeeper session over TLS, ssl.clientAuth=need
// refusing a client without a certificate, and an x509 ACL that lets only
// the client whose certificate it names in; Java's zkCli.sh over TLS (its
// Netty socket) printing the same on both; and quorum TLS (sslQuorum,
// ssl.quorum.*, one certificate per server) on a 3-server ensemble of
// each (the peer protocols differ, so the two are not mixed). Run with
// -tags compat.
package zktls
