// Package x509name formats a certificate's subject as Java's
// X500Principal.getName() does (RFC 2253): the x509 identity of a
// ZooKeeper client (quorum's X509AuthenticationProvider) and the Kafka
// principal of an SSL client ("User:" + the DN, as Kafka's
// DefaultKafkaPrincipalBuilder) are both this string. Mapper is Kafka's
// ssl.principal.mapping.rules, which turn that DN into a Kafka principal's
// name.
package x509name
