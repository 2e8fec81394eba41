#!/usr/bin/env python3
"""kafka-python (2.0) producing under a producer_byte_rate quota: it sends
64 KiB records for SECONDS (at most 2000), waits for every ack, and prints
"records bytes_per_second throttle_ms_max" (its produce-throttle-time-max
metric, from the responses' throttle_time_ms).

usage: kafka_python_produce.py BOOTSTRAP TOPIC CLIENT_ID SECONDS
"""
import os
import sys
import time

from kafka import KafkaProducer

bootstrap, topic, client_id, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
p = KafkaProducer(bootstrap_servers=bootstrap, client_id=client_id, acks=1, linger_ms=5,
                  batch_size=256 * 1024, buffer_memory=4 * 1024 * 1024, max_request_size=1024 * 1024,
                  max_block_ms=60000, request_timeout_ms=60000)
val = os.urandom(64 * 1024)
start = time.time()
futures = []
while time.time() - start < seconds and len(futures) < 2000:
    futures.append(p.send(topic, val))
p.flush(timeout=120)
for f in futures:
    f.get(timeout=60)
elapsed = time.time() - start
throttle = p.metrics().get("producer-metrics", {}).get("produce-throttle-time-max", 0) or 0
p.close(timeout=10)
print(len(futures), len(futures) * len(val) / elapsed, throttle)
