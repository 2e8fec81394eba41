# compat-tests/racks/compat-part.sh — sourced by compat-tests/compat.sh
# (which provides check, result, log and GOTEST).
#
# broker.rack and fetch from the closest replica (KIP-392) with librdkafka:
#
#   kcat   TestKcatClientRack: -X client.rack=b on three brokers in racks
#          a, b, c reads a partition led in rack a from the broker in rack b
CHECK_TIMEOUT=300 check kcat-client-rack zkafka racks-kcat \
	go test -tags compat -count=1 -timeout 4m -run '^TestKcatClientRack$' ./compat-tests/racks/
