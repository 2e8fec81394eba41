# compat-tests/kafkagroups/compat-part.sh — consumer groups with non-Go
# clients. Sourced by compat-tests/compat.sh, which provides check, result,
# free_port, log, WORK, PIDS and ROOT.
#
# Starts ZooKeeper and a broker in one process (cmd/groupbroker: `zkafka
# run` does not start the broker yet) on free 127.0.0.1 ports, then runs
# groups_check.py for each client: kcat -G (librdkafka's balanced
# consumer), kafka-python's KafkaConsumer with commits, and
# confluent-kafka with the cooperative-sticky assignor. Each proves that a
# second consumer in the group resumes from the offsets the first
# committed.

kafkagroups_part() {
	local pkgs=(kcat python3-kafka python3-confluent-kafka) missing=() p sudo=
	for p in "${pkgs[@]}"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			missing+=("$p")
		fi
	done
	if ((${#missing[@]})); then
		if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
		log "installing ${missing[*]}"
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
			{ $sudo apt-get update -qq >/dev/null &&
				DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
			true
	fi
	local bin="$WORK/groupbroker" dir="$WORK/kafkagroups" zkport kport pid ok=0
	if ! go build -o "$bin" ./compat-tests/kafkagroups/cmd/groupbroker >"$WORK/groupbroker-build.log" 2>&1; then
		for p in kcat kafka-python confluent-kafka; do
			result FAIL "$p" zkafka "building groupbroker failed: $(tail -n 3 "$WORK/groupbroker-build.log")"
		done
		return
	fi
	mkdir -p "$dir"
	zkport=$(free_port)
	kport=$(free_port)
	setsid "$bin" -dir "$dir" -zk-port "$zkport" -kafka-port "$kport" >"$dir/server.log" 2>&1 </dev/null &
	pid=$!
	PIDS+=("$pid")
	for _ in $(seq 150); do
		if timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$kport" 2>/dev/null; then ok=1; break; fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ $ok != 1 ]; then
		for p in kcat kafka-python confluent-kafka; do result FAIL "$p" zkafka "broker did not start"; done
		tail -n 20 "$dir/server.log" | sed 's/^/    /'
		return
	fi
	local chk=compat-tests/kafkagroups/groups_check.py bs="127.0.0.1:$kport"
	CHECK_TIMEOUT=120 check kcat zkafka groups-kcat "$PY" "$chk" kcat "$bs"
	CHECK_TIMEOUT=120 check kafka-python zkafka groups-kafka-python "$PY" "$chk" kafka-python "$bs"
	CHECK_TIMEOUT=120 check confluent-kafka zkafka groups-confluent "$PY" "$chk" confluent "$bs"
	if grep -q 'panic' "$dir/server.log"; then
		result FAIL groups zkafka "the broker logged a recovered panic: $(grep -m1 panic "$dir/server.log" | cut -c1-200)"
	fi
}
kafkagroups_part
