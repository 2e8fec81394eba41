#!/usr/bin/python3
"""confluent_txn_check.py BROKER: confluent-kafka-python's transactional
producer (Debian's python3-confluent-kafka on librdkafka) against zkafka.

  producer  init_transactions, then three transactions over two
            partitions: committed, aborted (after a flush: its records
            are in the log), committed
  consumer  isolation.level=read_committed from the beginning to the end
            of each partition: exactly the committed records, each once;
            read_uncommitted: every record, the aborted ones too
"""
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

BROKER = sys.argv[1]
RUN = str(int(time.time() * 1000))
TOPIC = "cftxn-" + RUN
PARTS = 2


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


admin = AdminClient({"bootstrap.servers": BROKER})
for fut in admin.create_topics([NewTopic(TOPIC, PARTS, 1)], request_timeout=10).values():
    fut.result(timeout=15)
time.sleep(0.5)

p = Producer({"bootstrap.servers": BROKER, "transactional.id": "cf-" + RUN, "transaction.timeout.ms": 30000})
p.init_transactions(30)
want = []
for name, n, commit in (("c1", 10, True), ("ab", 5, False), ("c2", 3, True)):
    p.begin_transaction()
    for i in range(n):
        p.produce(TOPIC, value=("%s-%d" % (name, i)).encode(), partition=i % PARTS)
    if commit:
        p.commit_transaction(30)
        want += ["%s-%d" % (name, i) for i in range(n)]
    else:
        check(p.flush(30) == 0, "flush before the abort")
        p.abort_transaction(30)


def read(isolation):
    c = Consumer({"bootstrap.servers": BROKER, "group.id": "cf-" + isolation + RUN, "isolation.level": isolation,
                  "enable.partition.eof": True, "enable.auto.commit": False})
    c.assign([TopicPartition(TOPIC, i, OFFSET_BEGINNING) for i in range(PARTS)])
    got, eof, deadline = [], set(), time.time() + 30
    while len(eof) < PARTS and time.time() < deadline:
        m = c.poll(1.0)
        if m is None:
            continue
        if m.error():
            check(m.error().code() == KafkaError._PARTITION_EOF, "consumer error %s" % m.error())
            eof.add(m.partition())
            continue
        got.append(m.value().decode())
    c.close()
    check(len(eof) == PARTS, "%s: the end of every partition in 30 s" % isolation)
    return got


committed = read("read_committed")
check(sorted(committed) == sorted(want), "read_committed read %s, want %s" % (sorted(committed), sorted(want)))
everything = read("read_uncommitted")
check(len(everything) == 18 and sum(v.startswith("ab-") for v in everything) == 5,
      "read_uncommitted read %s, want all 18 records" % sorted(everything))
print("PASS confluent-kafka transactions: %d committed records read_committed, %d read_uncommitted" % (len(committed), len(everything)))
