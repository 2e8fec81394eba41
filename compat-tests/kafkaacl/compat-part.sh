# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST),
# after kafka-clients/compat-part.sh has installed kcat and python3-kafka:
# kcat (librdkafka) over an SSL listener with a client certificate is
# refused by the ACL authorizer, then allowed once the ACLs are created;
# kafka-python's admin client creates, describes and deletes ACLs (v0-1,
# literal and prefixed) and its producer follows them. (The franz-go ACL
# tests run in make test.)
if command -v kcat >/dev/null; then
	check kcat acl kcat-acl "${GOTEST[@]}" -run '^TestKcatDeniedThenAllowed$' ./compat-tests/kafkaacl/
else
	result FAIL kcat acl "kcat is not installed (compat-tests/kafka-clients/compat-part.sh installs it)"
fi
if /usr/bin/python3 -c 'import kafka' 2>/dev/null; then
	check kafka-python acl kafka-python-acl "${GOTEST[@]}" -run '^TestKafkaPythonACLs$' ./compat-tests/kafkaacl/
else
	result FAIL kafka-python acl "python3-kafka is not installed (compat-tests/kafka-clients/compat-part.sh installs it)"
fi
