# compat-tests/kafkatxn/compat-part.sh — sourced by compat-tests/compat.sh
# (which provides check, result, free_port, log, WORK, PIDS and ROOT).
#
# franz-go's own transactional ETL test (pkg/kgo TestTxnEtl: a
# transactional producer, then three chained GroupTransactSession stages
# with rebalances, checking that every record is consumed exactly once)
# against `zkafka run` with 1 and with 3 brokers (KGO_TEST_RF). The
# franz-go sources are the module version go.mod names, from the module
# cache (go mod download), copied to a writable directory.

kafkatxn_part() {
	local bin="$WORK/zkafka-kafkatxn" src ver n dir zkport kport seeds pid ok i
	if ! go build -o "$bin" ./cmd/zkafka >"$WORK/kafkatxn-build.log" 2>&1; then
		result FAIL franz-go-txn zkafka "building zkafka failed: $(tail -n 3 "$WORK/kafkatxn-build.log")"
		return
	fi
	ver=$(go list -m -f '{{.Version}}' github.com/twmb/franz-go)
	src=$(go mod download -json "github.com/twmb/franz-go@$ver" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
	if [ -z "$src" ] || [ ! -d "$src/pkg/kgo" ]; then
		result FAIL franz-go-txn zkafka "no franz-go $ver sources in the module cache"
		return
	fi
	cp -r "$src" "$WORK/franz-go" && chmod -R u+w "$WORK/franz-go"
	for n in 1 3; do
		dir="$WORK/kafkatxn-$n"
		mkdir -p "$dir"
		zkport=$(free_port)
		kport=$(free_port) # broker i listens on kport+i
		setsid "$bin" run --brokers "$n" --data "$dir/data" --zookeeper-addr "127.0.0.1:$zkport" \
			--kafka-addr "127.0.0.1:$kport" --log-level warn >"$dir/server.log" 2>&1 </dev/null &
		pid=$!
		PIDS+=("$pid")
		seeds=
		ok=1
		for ((i = 0; i < n; i++)); do
			seeds="$seeds${seeds:+,}127.0.0.1:$((kport + i))"
			local up=0
			for _ in $(seq 200); do
				if timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$((kport + i))" 2>/dev/null; then up=1; break; fi
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			[ $up = 1 ] || ok=0
		done
		if [ $ok != 1 ]; then
			result FAIL "franz-go-txn-$n" zkafka "the brokers did not start"
			tail -n 20 "$dir/server.log" | sed 's/^/    /'
			continue
		fi
		CHECK_TIMEOUT=600 check "franz-go-txn-$n" zkafka "kafkatxn-etl-$n" \
			env -C "$WORK/franz-go/pkg/kgo" KGO_TEST_RF="$n" KGO_SEEDS="$seeds" KGO_TEST_RECORDS=20000 \
			go test -count=1 -timeout 9m -run '^TestTxnEtl$' .
		kill -TERM -- "-$pid" 2>/dev/null || true
		if grep -q 'panic' "$dir/server.log"; then
			result FAIL "franz-go-txn-$n" zkafka "the broker logged a recovered panic: $(grep -m1 panic "$dir/server.log" | cut -c1-200)"
		fi
	done
}
kafkatxn_part
