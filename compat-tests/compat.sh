#!/usr/bin/env bash
# make compat: ZooKeeper clients that are not Go, and the differential run
# against Apache ZooKeeper.
#
# Installs the Debian packages it needs (zookeeper, zookeeper-bin,
# python3-kazoo), builds bin/zkafka if it is missing, then runs every check
# first against Apache ZooKeeper 3.8 (to prove the check itself is right) and
# then against zkafka's ZooKeeper server:
#
#   go-zookeeper  go test -tags compat: zkserver lifecycle, the differential
#                 run (Apache vs Apache, self-test, Apache vs zkafka)
#   kazoo         compat-tests/kazoo/kazoo_check.py (recipes, watches, txns)
#   zkcli         compat-tests/zkcli/zkcli_check.py (scripted zkCli.sh session)
#
# Prints one PASS/FAIL line per client and server and exits non-zero on any
# failure. Every server it starts listens on 127.0.0.1 only and is stopped on
# exit. Takes about a minute.
set -euo pipefail

# The zkafka half runs only once our ZooKeeper server exists; flip to 1 then
# (or run `ZKAFKA_ZK_READY=1 make compat`).
ZKAFKA_ZK_READY=${ZKAFKA_ZK_READY:-1}

cd "$(dirname "$0")/.."
ROOT=$PWD
PY=/usr/bin/python3 # Debian's python3: python3-kazoo installs only for it
START=$(date +%s)

log() { printf 'compat: %s\n' "$*"; }

# ---- packages ---------------------------------------------------------------
PKGS=(zookeeper zookeeper-bin python3-kazoo)
missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if ((${#missing[@]})); then
	SUDO=
	if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then
		$SUDO apt-get update -qq >/dev/null
	fi
	if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
		$SUDO apt-get update -qq >/dev/null
		$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
fi
if ! command -v java >/dev/null; then
	log "no java on PATH: Apache ZooKeeper needs a JRE (apt-get install -y default-jre-headless)"
	exit 1
fi

# ---- processes we start, and cleanup ------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/zkafka-compat.XXXXXX")
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
	"$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# srvr_ok PORT: the server answers srvr with a Mode (ruok says imok before
# Apache ZooKeeper serves requests).
srvr_ok() {
	timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 && printf srvr >&3 && cat <&3" 2>/dev/null | grep -q '^Mode:'
}

# start_server KIND NAME: starts Apache ZooKeeper (KIND=apache) or
# `zkafka zookeeper` (KIND=zkafka) in $WORK/NAME with a fresh data dir on a
# free port; sets PORT. Returns 1 if it is not ready within 30 s.
start_server() {
	local kind=$1 name=$2 dir="$WORK/$2" pid
	mkdir -p "$dir/data"
	PORT=$(free_port)
	cat >"$dir/zoo.cfg" <<-EOF
		tickTime=2000
		dataDir=$dir/data
		clientPort=$PORT
		clientPortAddress=127.0.0.1
		maxClientCnxns=0
		admin.enableServer=false
		4lw.commands.whitelist=ruok,srvr,stat,conf,cons,mntr,wchs,isro
		extendedTypesEnabled=true
		znode.container.checkIntervalMs=1000
	EOF
	if [ "$kind" = apache ]; then
		printf '%s\n' 'log4j.rootLogger=INFO, C' 'log4j.appender.C=org.apache.log4j.ConsoleAppender' \
			'log4j.appender.C.layout=org.apache.log4j.PatternLayout' \
			'log4j.appender.C.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n' >"$dir/log4j.properties"
		setsid java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
			-Dzookeeper.admin.enableServer=false -Dzookeeper.extendedTypesEnabled=true \
			-Dznode.container.checkIntervalMs=1000 -Dlog4j.configuration="file:$dir/log4j.properties" \
			-cp "$dir:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar" \
			org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" >"$dir/server.log" 2>&1 </dev/null &
	else
		setsid "$ZKAFKA_BIN" zookeeper "$dir/zoo.cfg" >"$dir/server.log" 2>&1 </dev/null &
	fi
	pid=$!
	PIDS+=("$pid")
	for _ in $(seq 300); do
		if srvr_ok "$PORT"; then return 0; fi
		if ! kill -0 "$pid" 2>/dev/null; then break; fi
		sleep 0.1
	done
	log "$kind server $name on 127.0.0.1:$PORT not ready; log tail:"
	tail -n 20 "$dir/server.log" | sed 's/^/    /'
	return 1
}

# ---- results ------------------------------------------------------------------
RESULTS=()
FAILED=0
result() { # STATUS CLIENT SERVER DETAIL
	RESULTS+=("$(printf '%-8s %-13s %-7s %s' "$1" "$2" "$3" "$4")")
	printf '%-8s %-13s %-7s %s\n' "$1" "$2" "$3" "$4"
	if [ "$1" = FAIL ]; then FAILED=1; fi
}

# check CLIENT SERVER LOGNAME CMD...: runs CMD bounded in time, output to a
# log that is shown on failure.
check() {
	local client=$1 server=$2 logf="$WORK/$3.log" t0 rc=0
	shift 3
	t0=$(date +%s)
	timeout -k 10 "${CHECK_TIMEOUT:-300}" "$@" >"$logf" 2>&1 || rc=$?
	if [ $rc = 0 ]; then
		result PASS "$client" "$server" "($(($(date +%s) - t0))s) $(tail -n 1 "$logf")"
	else
		result FAIL "$client" "$server" "($(($(date +%s) - t0))s) exit $rc; output:"
		# The test's own failure lines first (a server's log tail can bury
		# them), then the end of the output without Java stack frames.
		grep -E -- '--- FAIL|_test\.go:[0-9]+:|^panic:|^FAIL' "$logf" | head -n 40 | sed 's/^/    /' || true
		grep -v -E '^        20|^[[:space:]]+at |^[[:space:]]+java\.|Exception$' "$logf" | tail -n 40 | sed 's/^/    /'
	fi
}

GOTEST=(go test -tags compat -count=1 -timeout 8m)
export ZKAFKA_COMPAT=1

# clients against one server of KIND (apache or zkafka)
run_clients() {
	local kind=$1
	if start_server "$kind" "$kind-clients"; then
		check kazoo "$kind" "kazoo-$kind" "$PY" compat-tests/kazoo/kazoo_check.py "127.0.0.1:$PORT"
		check zkcli "$kind" "zkcli-$kind" "$PY" compat-tests/zkcli/zkcli_check.py "127.0.0.1:$PORT"
	else
		result FAIL kazoo "$kind" "server did not start"
		result FAIL zkcli "$kind" "server did not start"
	fi
}

# ---- Apache ZooKeeper: proves the checks --------------------------------------
log "Apache ZooKeeper 3.8 ($(dpkg-query -W -f='${Version}' zookeeper))"
check go-zookeeper apache go-apache "${GOTEST[@]}" \
	-run '^(TestApacheLifecycle|TestApacheWhitelistWithoutRuok|TestApacheVsApache|TestSelfTestCatchesDifferences)$' \
	./compat-tests/zkserver/ ./compat-tests/differential/
run_clients apache

# ---- zkafka ---------------------------------------------------------------------
if [ "$ZKAFKA_ZK_READY" != 1 ]; then
	for c in go-zookeeper kazoo zkcli; do
		result "NOT RUN" "$c" zkafka "zkafka ZooKeeper server not built yet (ZKAFKA_ZK_READY=0)"
	done
else
	ZKAFKA_BIN=${ZKAFKA_BIN:-$ROOT/bin/zkafka}
	built=1
	if [ ! -x "$ZKAFKA_BIN" ]; then
		log "building $ZKAFKA_BIN"
		make -s build 2>&1 | tail -n 20 | sed 's/^/    /' || true
		[ -x "$ZKAFKA_BIN" ] || built=0
	fi
	if [ $built = 0 ]; then
		for c in go-zookeeper kazoo zkcli; do
			result FAIL "$c" zkafka "make build did not produce $ZKAFKA_BIN"
		done
	else
		export ZKAFKA_BIN
		log "zkafka ($ZKAFKA_BIN)"
		check go-zookeeper zkafka go-zkafka "${GOTEST[@]}" \
			-run '^(TestZkafkaLifecycle|TestApacheVsZkafka)$' ./compat-tests/zkserver/ ./compat-tests/differential/
		run_clients zkafka
	fi
fi

# ---- more parts: each compat-tests/*/compat-part.sh is sourced here and
# reports with `check` and `result` (Kafka clients, the ensemble, ...).
for part in compat-tests/*/compat-part.sh; do
	[ -f "$part" ] || continue
	log "part ${part#compat-tests/}"
	# shellcheck source=/dev/null
	source "$part"
done

echo
log "summary ($(($(date +%s) - START))s):"
printf '  %s\n' "${RESULTS[@]}"
exit $FAILED
