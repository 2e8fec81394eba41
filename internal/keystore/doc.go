// Package keystore loads TLS key pairs and trust pools from the keystore
// files Java servers are configured with, so that a zoo.cfg or a Kafka
// server.properties written for Apache ZooKeeper or Kafka works unchanged.
//
// Three types are read, named as Java names them (case-insensitive):
//
//	PEM     certificates and a private key in PEM blocks (crypto/tls)
//	PKCS12  a .p12/.pfx file (software.sslmate.com/src/go-pkcs12)
//	JKS     a Java KeyStore (github.com/pavlo-v-chernykh/keystore-go/v4)
//
// An empty type is guessed from the file name as ZooKeeper's
// KeyStoreFileType.fromPropertyValueOrFileName does: .pem, .p12/.pfx, .jks.
// PEMKeyPair and PEMTrustPool read PEM text given inline (Kafka's
// ssl.keystore.key, ssl.keystore.certificate.chain and
// ssl.truststore.certificates), with line breaks or without, the key maybe
// an encrypted PKCS#8 one (github.com/youmark/pkcs8).
// No format is parsed here: each is left to the library named above.
//
// CheckChainOnly is the one check the ZooKeeper client and the quorum both
// need with host name verification off: the peer's chain, not its name.
package keystore
