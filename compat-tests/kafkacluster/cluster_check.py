#!/usr/bin/python3
"""cluster_check.py CLIENT BOOTSTRAP [RF]: a Python Kafka client against a
3-broker zkafka cluster (CLIENT kafka-python or confluent-kafka; BOOTSTRAP
all three brokers, comma-separated; RF the replication factor, default 3).

  admin     create a topic with 4 partitions, replication factor RF
  metadata  three brokers; every partition with RF replicas, all in the ISR,
            and a leader among them
  producer  acks=all (confluent-kafka: idempotent): 200 keyed records, each
            acknowledged with its partition and offset
  consumer  assign every partition from the beginning: every acknowledged
            record comes back once, at its acknowledged offset
"""
import sys
import time

CLIENT, BOOTSTRAP = sys.argv[1], sys.argv[2]
TOPIC = "cluster-%s-%d" % (CLIENT, int(time.time() * 1000))
PARTS, N = 4, 200
RF = int(sys.argv[3]) if len(sys.argv) > 3 else 3


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


def wait_metadata(read):
    """read() returns (brokers, {partition: (leader, replicas, isr)})."""
    deadline = time.time() + 30
    while True:
        brokers, parts = read()
        ok = len(brokers) == 3 and len(parts) == PARTS and all(
            len(r) == RF and sorted(i) == sorted(r) and l in r for l, r, i in parts.values())
        if ok or time.time() > deadline:
            check(len(brokers) == 3, "brokers %s, want 3" % sorted(brokers))
            check(len(parts) == PARTS, "partitions %s, want %d" % (sorted(parts), PARTS))
            for p, (l, r, i) in sorted(parts.items()):
                check(len(r) == RF, "partition %d replicas %s, want %d" % (p, r, RF))
                check(sorted(i) == sorted(r), "partition %d ISR %s, want all replicas %s" % (p, i, r))
                check(l in r, "partition %d leader %d not a replica %s" % (p, l, r))
            return
        time.sleep(0.5)


def kafka_python():
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP.split(","), request_timeout_ms=20000)
    admin.create_topics([NewTopic(TOPIC, PARTS, RF)], timeout_ms=15000)

    def read():
        brokers = admin.describe_cluster()["brokers"]
        desc = admin.describe_topics([TOPIC])[0]
        return [b["node_id"] for b in brokers], {
            p["partition"]: (p["leader"], p["replicas"], p["isr"]) for p in desc["partitions"]}
    wait_metadata(read)
    prod = KafkaProducer(bootstrap_servers=BOOTSTRAP.split(","), acks="all", retries=10)
    futs = [(i, prod.send(TOPIC, key=b"k%d" % i, value=b"v%d" % i, partition=i % PARTS)) for i in range(N)]
    acked = {}
    for i, f in futs:
        md = f.get(timeout=30)
        acked[(md.partition, md.offset)] = b"v%d" % i
    prod.close()
    cons = KafkaConsumer(bootstrap_servers=BOOTSTRAP.split(","), enable_auto_commit=False,
                         consumer_timeout_ms=15000)
    tps = [TopicPartition(TOPIC, p) for p in range(PARTS)]
    cons.assign(tps)
    cons.seek_to_beginning(*tps)
    got = {}
    for m in cons:
        check((m.partition, m.offset) not in got, "offset %d of partition %d read twice" % (m.offset, m.partition))
        got[(m.partition, m.offset)] = m.value
        if len(got) >= N:
            break
    cons.close()
    return acked, got


def confluent():
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": BOOTSTRAP})
    for f in admin.create_topics([NewTopic(TOPIC, PARTS, RF)], request_timeout=15).values():
        f.result(timeout=20)

    def read():
        md = admin.list_topics(TOPIC, timeout=10)
        t = md.topics[TOPIC]
        return list(md.brokers), {p: (pm.leader, list(pm.replicas), list(pm.isrs)) for p, pm in t.partitions.items()}
    wait_metadata(read)
    prod = Producer({"bootstrap.servers": BOOTSTRAP, "enable.idempotence": True, "acks": "all"})
    acked, errs = {}, []

    def report(err, msg):
        if err is not None:
            errs.append(err)
        else:
            acked[(msg.partition(), msg.offset())] = msg.value()
    for i in range(N):
        prod.produce(TOPIC, key=b"k%d" % i, value=b"v%d" % i, partition=i % PARTS, on_delivery=report)
        prod.poll(0)
    check(prod.flush(30) == 0, "records still in flight after 30 s")
    check(not errs, "delivery errors: %s" % errs[:3])
    cons = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": TOPIC, "enable.auto.commit": False})
    cons.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in range(PARTS)])
    got, deadline = {}, time.time() + 30
    while len(got) < N and time.time() < deadline:
        m = cons.poll(1.0)
        if m is None or m.error():
            continue
        check((m.partition(), m.offset()) not in got, "offset %d of partition %d read twice" % (m.offset(), m.partition()))
        got[(m.partition(), m.offset())] = m.value()
    cons.close()
    return acked, got


acked, got = {"kafka-python": kafka_python, "confluent-kafka": confluent}[CLIENT]()
check(len(acked) == N, "%d of %d records acknowledged" % (len(acked), N))
check(got == acked, "read back %d records, %d acknowledged; first differences: %s" % (
    len(got), len(acked), sorted(set(acked.items()) ^ set(got.items()))[:5]))
print("%s: topic RF %d on 3 brokers, %d records acknowledged (acks=all) and read back at their offsets" % (CLIENT, RF, N))
