#!/usr/bin/python3
"""kafka_python_check.py BROKER: kafka-python (Debian's python3-kafka 2.0.2)
against a zkafka broker.

kafka-python does not negotiate versions: it infers the broker's version
from the ApiVersions maxima and then sends fixed versions, so this also
checks that the inferred version is one whose requests the broker serves.

  admin     KafkaAdminClient.create_topics (3 partitions), then a duplicate
            create is refused with TopicAlreadyExistsError, list_topics and
            describe_configs see it
  producer  keyed records with headers to chosen partitions, uncompressed
            and gzip (the Python codecs for snappy/lz4/zstd are not packaged),
            every future resolved with its offset
  consumer  assign + seek_to_beginning (no group), reads every record back
            exactly (key, value, headers, partition, offset), then
            end_offsets / offsets_for_times
"""
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.errors import TopicAlreadyExistsError

BROKER = sys.argv[1]
RUN = str(int(time.time() * 1000))
TOPIC = "kafka-python-" + RUN
N = 300
PARTS = 3


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


admin = KafkaAdminClient(bootstrap_servers=BROKER, request_timeout_ms=10000)
admin.create_topics([NewTopic(TOPIC, PARTS, 1)], timeout_ms=10000)
try:
    admin.create_topics([NewTopic(TOPIC, PARTS, 1)], timeout_ms=10000)
    check(False, "second create_topics of the same name succeeded")
except TopicAlreadyExistsError:
    pass
check(TOPIC in admin.list_topics(), "list_topics does not list " + TOPIC)
admin.create_topics([NewTopic(TOPIC + "-grow", 1, 1)], timeout_ms=10000)
admin.create_partitions({TOPIC + "-grow": NewPartitions(3)})
desc = admin.describe_topics([TOPIC + "-grow"])
check(len(desc[0]["partitions"]) == 3 and desc[0]["error_code"] == 0, "describe_topics after create_partitions: %r" % (desc,))
admin.delete_topics([TOPIC + "-grow"], timeout_ms=10000)
deadline = time.time() + 10
while TOPIC + "-grow" in admin.list_topics():
    check(time.time() < deadline, "delete_topics: still listed")
    time.sleep(0.1)
cluster = admin.describe_cluster()
check(cluster["controller_id"] == 0 and len(cluster["brokers"]) == 1, "describe_cluster %r" % (cluster,))
cfgs = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC)])
check(cfgs and cfgs[0].resources[0][0] == 0, "describe_configs: %r" % (cfgs,))
admin.close()

sent = {}  # (partition, offset) -> (key, value, headers)
for codec in (None, "gzip"):
    producer = KafkaProducer(bootstrap_servers=BROKER, acks="all", compression_type=codec,
                             linger_ms=20, retries=5, request_timeout_ms=10000)
    futures = []
    for i in range(N // 2):
        p = i % PARTS
        key = ("key-%s-%d" % (codec, i)).encode()
        value = ("value %d " % i).encode() * (i % 7 + 1)
        headers = [("h", str(i).encode())]
        futures.append((producer.send(TOPIC, key=key, value=value, headers=headers, partition=p),
                        (key, value, headers)))
    producer.flush(timeout=30)
    for fut, rec in futures:
        md = fut.get(timeout=30)
        check((md.partition, md.offset) not in sent, "offset %d/%d acknowledged twice" % (md.partition, md.offset))
        sent[(md.partition, md.offset)] = rec
    producer.close(timeout=10)
check(len(sent) == N, "acknowledged %d of %d" % (len(sent), N))

consumer = KafkaConsumer(bootstrap_servers=BROKER, group_id=None, enable_auto_commit=False,
                         auto_offset_reset="earliest", consumer_timeout_ms=10000, request_timeout_ms=30000)
tps = [TopicPartition(TOPIC, p) for p in range(PARTS)]
check(consumer.partitions_for_topic(TOPIC) == set(range(PARTS)), "partitions_for_topic")
consumer.assign(tps)
consumer.seek_to_beginning(*tps)
got = {}
deadline = time.time() + 60
while len(got) < N and time.time() < deadline:
    for tp, msgs in consumer.poll(timeout_ms=1000).items():
        for m in msgs:
            check((m.partition, m.offset) not in got, "offset %d/%d consumed twice" % (m.partition, m.offset))
            got[(m.partition, m.offset)] = (m.key, m.value, [(k, v) for k, v in m.headers])
check(got == sent, "consumed %d records; differences: %r" % (
    len(got), [k for k in set(got) | set(sent) if got.get(k) != sent.get(k)][:5]))
ends = consumer.end_offsets(tps)
check(ends == {tp: N // PARTS for tp in tps}, "end_offsets %r" % (ends,))
times = consumer.offsets_for_times({tp: 0 for tp in tps})
check(all(times[tp] is not None and times[tp].offset == 0 for tp in tps), "offsets_for_times %r" % (times,))
consumer.close()

# auto-created topic, acks=1 and acks=0
auto = "kafka-python-auto-" + RUN
p1 = KafkaProducer(bootstrap_servers=BROKER, acks=1)
md = p1.send(auto, b"one").get(timeout=30)
check(md.offset == 0, "auto-created topic: first offset %d" % md.offset)
p1.close(timeout=10)
p0 = KafkaProducer(bootstrap_servers=BROKER, acks=0)
p0.send(auto, b"two")
p0.flush(timeout=10)
p0.close(timeout=10)
c = KafkaConsumer(auto, bootstrap_servers=BROKER, group_id=None, auto_offset_reset="earliest", consumer_timeout_ms=5000)
vals = [m.value for m in c]
c.close()
check(vals == [b"one", b"two"], "auto-created topic read back %r" % (vals,))

probe = KafkaConsumer(bootstrap_servers=BROKER)
version = ".".join(map(str, probe.config["api_version"]))
probe.close()
print("kafka-python %s (infers broker %s): admin create/partitions/describe/delete, %d records produced (none, gzip) and consumed back exactly, auto-create with acks 1 and 0"
      % (__import__("kafka").__version__, version, N))
