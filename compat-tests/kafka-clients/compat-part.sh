# compat-tests/kafka-clients/compat-part.sh — sourced by compat-tests/compat.sh
# (which provides PY, WORK, PIDS, log, free_port, start_server, check, result).
#
# Kafka clients that are not Go, against `zkafka broker server.properties`
# on `zkafka zookeeper zoo.cfg`:
#
#   kcat                 kcat_check.sh: metadata -L, keyed messages produced and
#                        consumed back exactly with every codec (none gzip
#                        snappy lz4 zstd), and the codec checked on disk
#   kafka-python         kafka_python_check.py: admin create topic, producer,
#                        consumer
#   confluent-kafka      confluent_kafka_check.py: producer with delivery
#                        reports (idempotent, every codec), consumer
#
# and the franz-go suite (compat-tests/kafkago) once more with its brokers on
# Apache ZooKeeper 3.8 (ZKAFKA_TEST_ZK). Installs kcat, python3-kafka and
# python3-confluent-kafka if missing. Every process listens on 127.0.0.1 and
# is in PIDS, which compat.sh's trap kills on exit.

KC_DIR=compat-tests/kafka-clients

kc_install() {
	local p missing=() sudo=
	for p in kcat python3-kafka python3-confluent-kafka; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	[ "$(id -u)" = 0 ] || sudo=sudo
	log "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
		{ $sudo apt-get update -qq >/dev/null &&
			DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
}

# kc_port_open PORT: something accepts on 127.0.0.1:PORT.
kc_port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# kc_start_broker ZKPORT: starts `zkafka broker` in $WORK/kafka-broker on a
# free port under the chroot /zkafka-compat; sets KPORT and KLOGDIR.
kc_start_broker() {
	local dir="$WORK/kafka-broker" pid
	mkdir -p "$dir/logs"
	KPORT=$(free_port)
	KLOGDIR="$dir/logs"
	cat >"$dir/server.properties" <<-EOF
		broker.id=0
		listeners=PLAINTEXT://127.0.0.1:$KPORT
		log.dirs=$KLOGDIR
		zookeeper.connect=127.0.0.1:$1/zkafka-compat
		zookeeper.session.timeout.ms=6000
		num.partitions=1
		default.replication.factor=1
		auto.create.topics.enable=true
		log.flush.interval.messages=10000
		log.retention.hours=168
	EOF
	setsid "$ZKAFKA_BIN" broker "$dir/server.properties" >"$dir/broker.log" 2>&1 </dev/null &
	pid=$!
	PIDS+=("$pid")
	for _ in $(seq 300); do
		# registered (and so serving) once it logs so
		if kc_port_open "$KPORT" && grep -q 'broker registered' "$dir/broker.log"; then return 0; fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	log "zkafka broker on 127.0.0.1:$KPORT not ready; log tail:"
	tail -n 20 "$dir/broker.log" | sed 's/^/    /'
	return 1
}

kc_clients=(kcat kafka-python confluent-kafka)
if ! kc_install; then
	for c in "${kc_clients[@]}"; do result FAIL "$c" zkafka "apt-get install failed"; done
else
	ZKAFKA_BIN=${ZKAFKA_BIN:-$ROOT/bin/zkafka}
	if [ ! -x "$ZKAFKA_BIN" ]; then make -s build 2>&1 | tail -n 20 | sed 's/^/    /' || true; fi
	if [ ! -x "$ZKAFKA_BIN" ]; then
		for c in "${kc_clients[@]}"; do result FAIL "$c" zkafka "no $ZKAFKA_BIN"; done
	elif ! start_server zkafka kafka-zk || ! kc_start_broker "$PORT"; then
		for c in "${kc_clients[@]}"; do result FAIL "$c" zkafka "zkafka zookeeper + broker did not start"; done
	else
		log "zkafka broker 127.0.0.1:$KPORT on zkafka zookeeper 127.0.0.1:$PORT"
		CHECK_TIMEOUT=180 check kcat zkafka kafka-kcat bash "$KC_DIR/kcat_check.sh" "127.0.0.1:$KPORT" "$KLOGDIR"
		CHECK_TIMEOUT=180 check kafka-python zkafka kafka-python "$PY" "$KC_DIR/kafka_python_check.py" "127.0.0.1:$KPORT"
		CHECK_TIMEOUT=180 check confluent-kafka zkafka kafka-confluent "$PY" "$KC_DIR/confluent_kafka_check.py" "127.0.0.1:$KPORT"
		if grep -q 'level=ERROR\|panic' "$WORK/kafka-broker/broker.log"; then
			result FAIL zkafka-broker zkafka "errors in the broker log:"
			grep 'level=ERROR\|panic' "$WORK/kafka-broker/broker.log" | head -n 20 | sed 's/^/    /'
		fi
	fi
fi

# franz-go: the kafkago suite with its brokers on Apache ZooKeeper 3.8.
if start_server apache kafka-apache-zk; then
	ZKAFKA_TEST_ZK=127.0.0.1:$PORT check franz-go apache kafkago-apache \
		go test -count=1 -timeout 8m ./compat-tests/kafkago/
else
	result FAIL franz-go apache "Apache ZooKeeper did not start"
fi
