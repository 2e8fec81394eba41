#!/usr/bin/python3
"""Consumer groups against zkafka with non-Go clients (make compat).

usage: groups_check.py {kcat|kafka-python|confluent} BOOTSTRAP

Each check creates its own topic (4 partitions, kafka-python's admin
client), produces 200 records, reads part of them in a consumer group
that commits, stops, then starts a new consumer in the same group and
proves it resumes from the committed offsets: the two runs together read
every record, and the second run reads nothing the first committed.
Prints one summary line; exits non-zero on failure. Every wait is bounded.
"""
import subprocess
import sys
import time
import uuid

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

N = 200
PARTS = 4


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def setup(bootstrap, name):
    topic = "%s-%s" % (name, uuid.uuid4().hex[:8])
    adm = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    adm.create_topics([NewTopic(topic, PARTS, 1)])
    adm.close()
    p = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(N):
        p.send(topic, value=b"v-%d" % i, partition=i % PARTS)
    p.flush(timeout=30)
    p.close()
    return topic, "grp-" + topic


def committed(bootstrap, group, topic):
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    out = {p: c.committed(TopicPartition(topic, p)) for p in range(PARTS)}
    c.close()
    return out


def verify(first, second, name):
    a, b = set(first), set(second)
    want = set(b"v-%d" % i for i in range(N))
    if a & b:
        fail("%s: %d records read again after the commit (e.g. %r)" % (name, len(a & b), sorted(a & b)[:3]))
    if a | b != want:
        fail("%s: %d records never read" % (name, len(want - (a | b))))
    if not first or not second:
        fail("%s: a run read nothing (%d, %d)" % (name, len(first), len(second)))
    print("%s: group read %d + %d records, resumed from committed offsets" % (name, len(first), len(second)))


def check_kafka_python(bootstrap):
    topic, group = setup(bootstrap, "kpy")

    def run(limit):
        c = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                          enable_auto_commit=False, consumer_timeout_ms=3000, session_timeout_ms=10000,
                          heartbeat_interval_ms=500)
        got = []
        deadline = time.time() + 30
        for msg in c:
            got.append(msg.value)
            if len(got) >= limit or time.time() > deadline:
                break
        c.commit()
        c.close()
        return got

    first = run(120)
    offs = committed(bootstrap, group, topic)
    if sum(o or 0 for o in offs.values()) != len(first):
        fail("kafka-python: committed %r after reading %d" % (offs, len(first)))
    second = run(N)
    verify(first, second, "kafka-python")


def check_confluent(bootstrap):
    from confluent_kafka import Consumer
    topic, group = setup(bootstrap, "ckpy")
    assigned = []

    def run(limit):
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                      "enable.auto.commit": False, "partition.assignment.strategy": "cooperative-sticky",
                      "session.timeout.ms": 10000, "heartbeat.interval.ms": 500})
        c.subscribe([topic], on_assign=lambda cons, parts: assigned.append(len(parts)))
        got = []
        deadline = time.time() + 30
        idle = 0
        while len(got) < limit and time.time() < deadline and idle < 6:
            m = c.poll(0.5)
            if m is None:
                idle += 1 if got else 0
                continue
            if m.error():
                continue
            idle = 0
            got.append(m.value())
        c.commit(asynchronous=False)
        c.close()
        return got

    first = run(120)
    second = run(N)
    if not assigned:
        fail("confluent-kafka: no cooperative assignment callback")
    verify(first, second, "confluent-kafka (cooperative-sticky)")


def check_kcat(bootstrap):
    topic, group = setup(bootstrap, "kcat")

    def run(count):
        cmd = ["kcat", "-b", bootstrap, "-G", group, "-X", "auto.offset.reset=earliest", "-e", "-q", "-f", "%s\\n",
               "-X", "enable.auto.commit=true", "-X", "auto.commit.interval.ms=100",
               "-X", "session.timeout.ms=10000", topic]
        if count:
            cmd[5:5] = ["-c", str(count)]
        out = subprocess.run(cmd, capture_output=True, timeout=60)
        if out.returncode not in (0,):
            fail("kcat exit %d: %s" % (out.returncode, out.stderr.decode()[-500:]))
        return [l.encode() for l in out.stdout.decode().split("\n") if l]

    first = run(100)
    # kcat commits what it consumed when it closes.
    offs = committed(bootstrap, group, topic)
    if sum(o or 0 for o in offs.values()) != len(first):
        fail("kcat: committed %r after reading %d" % (offs, len(first)))
    second = run(0)
    verify(first, second, "kcat -G")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    {"kcat": check_kcat, "kafka-python": check_kafka_python, "confluent": check_confluent}[sys.argv[1]](sys.argv[2])
