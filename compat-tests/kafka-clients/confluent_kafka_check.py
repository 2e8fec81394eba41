#!/usr/bin/python3
"""confluent_kafka_check.py BROKER: confluent-kafka-python (Debian's
python3-confluent-kafka on librdkafka) against a zkafka broker.

  admin     AdminClient.create_topics (4 partitions)
  producer  idempotent, acks=all, per codec none gzip snappy lz4 zstd: keyed
            records with headers, each with a delivery report that must
            carry no error, its partition and a fresh offset
  consumer  assign (no group rebalance) from the beginning of every
            partition; every delivered record comes back exactly once with
            its key, value, headers and the offset of its delivery report;
            then get_watermark_offsets and offsets_for_times
"""
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

BROKER = sys.argv[1]
RUN = str(int(time.time() * 1000))
TOPIC = "confluent-" + RUN
PARTS = 4
PER_CODEC = 250


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


admin = AdminClient({"bootstrap.servers": BROKER})
for name, fut in admin.create_topics([NewTopic(TOPIC, PARTS, 1)], request_timeout=10).items():
    fut.result(timeout=15)
from confluent_kafka.admin import ConfigResource, NewPartitions

grow = TOPIC + "-grow"
for f in admin.create_topics([NewTopic(grow, 2, 1, config={"retention.ms": "3600000"})]).values():
    f.result(timeout=15)
for f in admin.create_partitions([NewPartitions(grow, 5)]).values():
    f.result(timeout=15)
check(len(admin.list_topics(topic=grow, timeout=10).topics[grow].partitions) == 5, "create_partitions")
for f in admin.describe_configs([ConfigResource("topic", grow)]).values():
    c = f.result(timeout=15)
    check(c["retention.ms"].value == "3600000" and c["segment.bytes"].value == "1073741824", "describe_configs %r" % (c,))
for f in admin.delete_topics([grow]).values():
    f.result(timeout=15)
# (wait until it is gone once: librdkafka's metadata refresh of a topic it
# knows may auto-create it again afterwards, as with Kafka)
deadline = time.time() + 10
while grow in admin.list_topics(timeout=10).topics:
    check(time.time() < deadline, "delete_topics: still listed")
    time.sleep(0.1)
md = admin.list_topics(topic=TOPIC, timeout=10)
check(len(md.topics[TOPIC].partitions) == PARTS, "list_topics: %r" % (md.topics[TOPIC].partitions,))

delivered = {}  # (partition, offset) -> (key, value, headers)
sent_headers = {}  # key -> headers
errors = []


def on_delivery(err, msg):
    if err is not None:
        errors.append(str(err))
        return
    k = (msg.partition(), msg.offset())
    if k in delivered:
        errors.append("offset %r reported twice" % (k,))
    # a delivery report carries no headers: take them from what was sent
    delivered[k] = (msg.key(), msg.value(), sent_headers[msg.key()])


for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
    p = Producer({"bootstrap.servers": BROKER, "enable.idempotence": True, "acks": "all",
                  "compression.codec": codec, "linger.ms": 10, "message.timeout.ms": 30000})
    for i in range(PER_CODEC):
        key = ("%s-%d" % (codec, i)).encode()
        value = ("payload %s %d " % (codec, i)).encode() * (i % 9 + 1)
        sent_headers[key] = [("i", str(i).encode()), ("codec", codec.encode())]
        p.produce(TOPIC, key=key, value=value, headers=sent_headers[key], on_delivery=on_delivery)
        p.poll(0)
    left = p.flush(30)
    check(left == 0, "%s: %d messages not delivered after flush" % (codec, left))
check(not errors, "delivery errors: %r" % errors[:5])
total = PER_CODEC * 5
check(len(delivered) == total, "%d delivery reports for %d messages" % (len(delivered), total))

c = Consumer({"bootstrap.servers": BROKER, "group.id": "confluent-check-" + RUN,
              "enable.auto.commit": False, "enable.partition.eof": True})
c.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in range(PARTS)])
got = {}
eof = set()
deadline = time.time() + 60
while len(eof) < PARTS and time.time() < deadline:
    m = c.poll(1.0)
    if m is None:
        continue
    if m.error():
        if m.error().code() == KafkaError._PARTITION_EOF:
            eof.add(m.partition())
            continue
        check(False, "consumer error: %s" % m.error())
    k = (m.partition(), m.offset())
    check(k not in got, "offset %r consumed twice" % (k,))
    got[k] = (m.key(), m.value(), m.headers())
check(got == delivered, "consumed %d records, delivered %d; differences: %r" % (
    len(got), len(delivered), [k for k in set(got) | set(delivered) if got.get(k) != delivered.get(k)][:5]))
ends = 0
for p in range(PARTS):
    lo, hi = c.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=10)
    check(lo == 0 and hi == 1 + max(o for (pp, o) in delivered if pp == p), "watermarks of %d: %d %d" % (p, lo, hi))
    ends += hi
check(ends == total, "watermarks sum %d, want %d" % (ends, total))
times = c.offsets_for_times([TopicPartition(TOPIC, p, 0) for p in range(PARTS)], timeout=10)
check(all(t.offset == 0 for t in times), "offsets_for_times %r" % (times,))
c.close()
import confluent_kafka
print("confluent-kafka %s (librdkafka %s): admin create/partitions/configs/delete, %d idempotent records with delivery reports (none gzip snappy lz4 zstd), consumed back exactly"
      % (confluent_kafka.version()[0], confluent_kafka.libversion()[0], total))
