"""confluent-kafka (librdkafka) over a SASL listener: produce N records with
delivery reports, consume them back in order. Arguments: bootstrap
security.protocol sasl.mechanism user password ca-file-or-- topic n."""
import sys

from confluent_kafka import Consumer, Producer

bootstrap, protocol, mechanism, user, password, ca, topic, n = sys.argv[1:]
n = int(n)
conf = {"bootstrap.servers": bootstrap, "security.protocol": protocol, "sasl.mechanisms": mechanism,
        "sasl.username": user, "sasl.password": password, "socket.timeout.ms": 10000}
if ca != "-":
    conf["ssl.ca.location"] = ca
errors = []
p = Producer(dict(conf, **{"enable.idempotence": True}))
for i in range(n):
    p.produce(topic, key=str(i), value="v%d" % i,
              on_delivery=lambda err, msg: errors.append(err) if err else None)
left = p.flush(30)
if left or errors:
    sys.exit("produce: %d undelivered, errors %s" % (left, errors[:3]))
c = Consumer(dict(conf, **{"group.id": "g-" + topic, "auto.offset.reset": "earliest"}))
c.subscribe([topic])
got = []
for _ in range(600):
    if len(got) == n:
        break
    m = c.poll(0.1)
    if m is None:
        continue
    if m.error():
        sys.exit("consume: %s" % m.error())
    got.append(m.key().decode())
c.close()
if got != [str(i) for i in range(n)]:
    sys.exit("consumed %d records: %s" % (len(got), got[:10]))
print("ok", n)
