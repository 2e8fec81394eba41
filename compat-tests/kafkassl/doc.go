// Package kafkassl tests the broker's SSL listeners through franz-go
// (kgo.DialTLSConfig) and, with -tags compat, kcat (librdkafka) against an
// in-process broker: produce and fetch over TLS with PKCS12 and PEM
// keystores, ssl.client.auth=required refusing a client without a
// certificate, and PLAINTEXT and SSL listeners on one broker, Metadata
// answering each client with its own listener's port. The certificates
// are made by each test (certs_test.go). SASL listeners are tested in
// compat-tests/kafkasasl.
package kafkassl
