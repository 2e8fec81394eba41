"""kafka-python over a SASL_PLAINTEXT listener, or SASL_SSL when a CA file is
given: produce N records, consume them back in order. Arguments: bootstrap
sasl.mechanism user password topic n [cafile].
A wrong password must fail: with "bad" as the password the script expects
the connection to be refused."""
import sys

from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import KafkaError

bootstrap, mechanism, user, password, topic, n = sys.argv[1:7]
n = int(n)
conf = dict(bootstrap_servers=bootstrap, security_protocol="SASL_PLAINTEXT", sasl_mechanism=mechanism,
            sasl_plain_username=user, sasl_plain_password=password, api_version_auto_timeout_ms=10000)
if len(sys.argv) > 7:
    conf.update(security_protocol="SASL_SSL", ssl_cafile=sys.argv[7], ssl_check_hostname=False)
if password == "bad":
    try:
        KafkaProducer(**conf).send(topic, b"x").get(timeout=10)
    except KafkaError as e:
        print("refused", type(e).__name__)
        sys.exit(0)
    sys.exit("a wrong password was accepted")
p = KafkaProducer(**conf)
for i in range(n):
    p.send(topic, key=str(i).encode(), value=b"v").get(timeout=30)
p.close()
c = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=20000, **conf)
got = []
for m in c:
    got.append(m.key.decode())
    if len(got) == n:
        break
c.close()
if got != [str(i) for i in range(n)]:
    sys.exit("consumed %d records: %s" % (len(got), got[:10]))
print("ok", n)
