# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST),
# after kafka-clients/compat-part.sh has installed kcat: kcat (librdkafka)
# over an SSL listener with a client certificate is refused by the ACL
# authorizer, then allowed once the ACLs are created. (The franz-go ACL
# tests run in make test.)
if command -v kcat >/dev/null; then
	check kcat acl kcat-acl "${GOTEST[@]}" -run '^TestKcatDeniedThenAllowed$' ./compat-tests/kafkaacl/
else
	result FAIL kcat acl "kcat is not installed (compat-tests/kafka-clients/compat-part.sh installs it)"
fi
