// Package kafkaacl tests the broker's ACL authorizer
// (authorizer.class.name=kafka.security.authorizer.AclAuthorizer) through
// franz-go (kgo, kadm, kmsg) against in-process brokers whose SSL
// listener requires client certificates: each test client is a principal
// ("User:CN=alice,O=zkafka", the certificate's subject DN, as Kafka's
// DefaultKafkaPrincipalBuilder makes it), the PLAINTEXT listener is
// User:ANONYMOUS, and User:CN=admin,O=zkafka is in super.users.
//
//   - acl_apis_test.go: CreateAcls / DescribeAcls / DeleteAcls (filters,
//     errors, SECURITY_DISABLED without an authorizer), the znodes they
//     write in Kafka's JSON, and a change made through one broker applying
//     on the other;
//   - matrix_test.go: principal × operation × resource pattern →
//     allowed or the API's authorization error, through the clients;
//   - store_test.go: compare-and-set writes racing a write behind the
//     broker's back, ACLs loaded at start, allow.everyone.if.no.acl.found,
//     authorized-operations bit fields;
//   - principal_test.go: ssl.principal.mapping.rules turning DNs into the
//     principals of the ACLs and super.users, and refusing an unmapped one;
//   - bench_test.go: a produce request with and without the authorizer;
//   - kcat_test.go (-tags compat): kcat (librdkafka) denied, then allowed;
//     kafka-python's admin client managing ACLs and its producer following
//     them (kafka_python_check.py).
//
// The certificates are made by each test (certs_test.go).
package kafkaacl
