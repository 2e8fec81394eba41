# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST),
# after kafka-clients/compat-part.sh has installed python3-kafka:
# kafka-python's producer under a producer_byte_rate quota set with kadm is
# held near it by the muted connection, sees the throttle times, and loses
# nothing. (The franz-go quota tests run in make test.)
if /usr/bin/python3 -c 'import kafka' 2>/dev/null; then
	check kafka-python quota kafka-python-quota "${GOTEST[@]}" -run '^TestKafkaPythonProduceQuota$' ./compat-tests/kafkaquota/
else
	result FAIL kafka-python quota "python3-kafka is not installed (compat-tests/kafka-clients/compat-part.sh installs it)"
fi
