"""kazoo against the zkafkatest control API: expire our own session over
HTTP and see it LOST, then the ephemeral gone from a new session.

Usage: kazoo_expire.py ZK_CONNECT CONTROL_URL
"""
import json
import sys
import threading
import urllib.request

from kazoo.client import KazooClient, KazooState

zk_connect, control = sys.argv[1], sys.argv[2]

lost = threading.Event()
zk = KazooClient(hosts=zk_connect, timeout=10)


def listener(state):
    if state == KazooState.LOST:
        lost.set()


zk.add_listener(listener)
zk.start(timeout=30)
zk.create("/eph", b"x", ephemeral=True)
session = zk.client_id[0]

req = urllib.request.Request(control + "/zookeeper/sessions/0x%x/expire" % session, data=b"", method="POST")
with urllib.request.urlopen(req, timeout=30) as resp:
    print("expire:", json.load(resp))

if not lost.wait(30):
    print("no LOST state within 30 s")
    sys.exit(1)
print("LOST")

other = KazooClient(hosts=zk_connect, timeout=10)
other.start(timeout=30)
if other.exists("/eph") is None:
    print("ephemeral gone")
else:
    print("ephemeral still there")
other.stop()
zk.stop()
