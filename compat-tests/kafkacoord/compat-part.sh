# compat-tests/kafkacoord/compat-part.sh — sourced by compat-tests/compat.sh
# (which provides check, result, log and GOTEST).
#
# kcat -G (librdkafka's balanced consumer) in a group whose coordinator,
# the leader of the group's __consumer_offsets partition on a 3-broker
# cluster, is stopped: kcat follows the group to the new coordinator,
# reads on and its commits land there (TestKcatGroupAcrossMove).
if ! command -v kcat >/dev/null 2>&1; then
	sudo=
	if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
	log "installing kcat"
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends kcat >/dev/null ||
		{ $sudo apt-get update -qq >/dev/null &&
			DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends kcat >/dev/null; } ||
		true
fi
CHECK_TIMEOUT=300 check kcat-coordinator-move zkafka kafkacoord-kcat \
	go test -tags compat -count=1 -timeout 4m -run '^TestKcatGroupAcrossMove$' ./compat-tests/kafkacoord/
