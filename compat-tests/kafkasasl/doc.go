// Package kafkasasl tests the broker's SASL listeners (SASL_PLAINTEXT,
// SASL_SSL) against an in-process broker on the shared ZooKeeper: franz-go
// (pkg/sasl/plain, pkg/sasl/scram SHA-256 and SHA-512) logging in, kadm
// managing SCRAM credentials (AlterUserScramCredentials then a login,
// DescribeUserScramCredentials, the znodes in Kafka's format), KIP-368
// re-authentication, and the bad inputs: a wrong password, an unknown
// mechanism, SaslAuthenticate before the handshake, requests before
// authentication, an authentication that never finishes. With -tags
// compat: kcat and confluent-kafka (librdkafka) over SASL_SSL and
// kafka-python over SASL_PLAINTEXT, with PLAIN and SCRAM; and the broker
// as a secured ZooKeeper client: SASL DIGEST-MD5 to Apache ZooKeeper 3.8,
// TLS with a client certificate to the secure client port of Apache
// ZooKeeper and zkafka, zookeeper.set.acl's ACLs checked on both. The
// certificates are made by each test (certs_test.go).
package kafkasasl
