#!/usr/bin/env bash
# kcat_check.sh BROKER LOGDIR: kcat (librdkafka) against a zkafka broker.
#   metadata  kcat -L lists the broker (as controller) and a topic
#   per codec none gzip snappy lz4 zstd: produce keyed messages (-K:) to a
#             fresh auto-created topic, consume them back with -e, compare
#             exactly (keys, values, order), and check on disk (LOGDIR) that
#             the stored batches carry that codec.
# Exits non-zero on the first difference; prints a one-line summary.
set -euo pipefail
B=$1
LOGDIR=$2
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
KCAT=(timeout -k 5 30 kcat -b "$B" -X socket.timeout.ms=10000 -X topic.metadata.refresh.interval.ms=1000)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

run=$$
n=0
for codec in none gzip snappy lz4 zstd; do
	topic="kcat-$codec-$run"
	# 200 keyed messages, some with empty values, some long and compressible.
	for i in $(seq 1 200); do
		case $((i % 4)) in
		0) printf 'key-%d:value %d\n' "$i" "$i" ;;
		1) printf 'key-%d:%s\n' "$i" "$(printf 'x%.0s' $(seq 1 $((i % 50 + 1))))" ;;
		2) printf 'k%d:\n' "$i" ;;
		3) printf 'key-%d:{"n":%d,"text":"the quick brown fox jumps over the lazy dog"}\n' "$i" "$i" ;;
		esac
	done >"$TMP/in-$codec"
	"${KCAT[@]}" -P -t "$topic" -K: -z "$codec" -X linger.ms=50 -X batch.num.messages=64 \
		-X enable.idempotence=true -X request.required.acks=all <"$TMP/in-$codec" \
		2>"$TMP/produce-$codec.err" || { cat "$TMP/produce-$codec.err"; fail "produce $codec"; }
	"${KCAT[@]}" -C -t "$topic" -p 0 -o beginning -e -K: -f '%k:%s\n' >"$TMP/out-$codec" \
		2>"$TMP/consume-$codec.err" || { cat "$TMP/consume-$codec.err"; fail "consume $codec"; }
	if ! cmp -s "$TMP/in-$codec" "$TMP/out-$codec"; then
		diff "$TMP/in-$codec" "$TMP/out-$codec" | head -n 20
		fail "$codec: consumed messages differ from produced"
	fi
	got=$("$PY" "$HERE/batch_codecs.py" "$LOGDIR/$topic-0" | sort -u | tr '\n' ' ')
	if [ "$got" != "$codec " ]; then
		fail "$codec: batches on disk are [$got], want [$codec]"
	fi
	# offsets as kcat sees them: 0..199 with no gap
	"${KCAT[@]}" -C -t "$topic" -p 0 -o beginning -e -f '%o\n' >"$TMP/off-$codec" 2>/dev/null
	seq 0 199 | cmp -s - "$TMP/off-$codec" || fail "$codec: offsets are not 0..199"
	n=$((n + 200))
done

# headers, acks=1, relative start offsets, offsets by time (-Q)
topic="kcat-headers-$run"
printf 'a:1\nb:2\nc:3\n' | "${KCAT[@]}" -P -t "$topic" -K: -H h1=v1 -H h2=v2 -X request.required.acks=1 || fail "produce with headers"
got=$("${KCAT[@]}" -C -t "$topic" -e -o beginning -f '%k=%s [%h] %o\n' 2>/dev/null)
[ "$got" = $'a=1 [h1=v1,h2=v2] 0\nb=2 [h1=v1,h2=v2] 1\nc=3 [h1=v1,h2=v2] 2' ] || fail "headers read back as: $got"
got=$("${KCAT[@]}" -C -t "$topic" -e -o -2 -f '%s ' 2>/dev/null)
[ "$got" = "2 3 " ] || fail "-o -2 read: $got"
ts=$("${KCAT[@]}" -C -t "$topic" -e -o beginning -c 1 -f '%T' 2>/dev/null)
for q in "0 0" "$ts 0" "$((ts + 1)) -1" "-1 3" "-2 0"; do
	set -- $q
	got=$("${KCAT[@]}" -Q -t "$topic:0:$1" 2>&1)
	[ "$got" = "$topic [0] offset $2" ] || fail "-Q $topic:0:$1 gave '$got', want offset $2"
done
printf 'x\n' | "${KCAT[@]}" -P -t "$topic" -X request.required.acks=0 || fail "acks=0 produce"
got=$("${KCAT[@]}" -C -t "$topic" -e -o 3 -f '%s' 2>/dev/null)
[ "$got" = x ] || fail "acks=0 record read back as '$got'"

meta=$("${KCAT[@]}" -L 2>&1) || { echo "$meta"; fail "kcat -L"; }
grep -q 'broker 0 at 127.0.0.1:.*(controller)' <<<"$meta" || { echo "$meta"; fail "kcat -L: no controller broker"; }
grep -q "topic \"kcat-zstd-$run\" with 1 partitions" <<<"$meta" || { echo "$meta"; fail "kcat -L: topic missing"; }
grep -q 'partition 0, leader 0, replicas: 0, isrs: 0' <<<"$meta" || { echo "$meta"; fail "kcat -L: partition line"; }
json=$("${KCAT[@]}" -L -J -t "kcat-none-$run")
"$PY" -c 'import json,sys; m=json.loads(sys.argv[1]); t=m["topics"][0]; assert m["brokers"][0]["id"]==0 and t["partitions"][0]["leader"]==0, m' "$json" \
	|| fail "kcat -L -J: $json"
echo "kcat $(kcat -V 2>&1 | sed -n 's/^Version \([^ ]*\) .*librdkafka \([^ ]*\) .*/\1 (librdkafka \2)/p'): metadata, $n keyed messages produced and consumed back exactly with none gzip snappy lz4 zstd (stored compressed); headers, acks 0/1, -o -N, -Q by time"
