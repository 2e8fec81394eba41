#!/usr/bin/python3
"""kazoo's SASL DIGEST-MD5 against one ZooKeeper server.

Usage: /usr/bin/python3 kazoo_sasl.py HOST:PORT

The server has the JAAS users alice (alice-secret), bob (bob-secret) and
admin (admin-secret, the superUser), and the sasl provider. Prints one line per step (what the server answered,
in kazoo's terms) for the Go test to compare between Apache ZooKeeper and
zkafka; exits 2 on usage errors. Every wait is bounded.
"""

import socket
import sys
import time

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.security import make_acl


def client(hosts, user=None, password=None, timeout=10):
    opts = {}
    if user is not None:
        opts["sasl_options"] = {"mechanism": "DIGEST-MD5", "username": user, "password": password}
    c = KazooClient(hosts=hosts, timeout=10.0, connection_retry={"max_tries": 1, "delay": 0.1},
                    command_retry={"max_tries": 1, "delay": 0.1}, **opts)
    c.start(timeout=timeout)
    return c


def wait_for(pred, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not pred():
        time.sleep(0.02)
    return pred()


def failing(hosts, user, password, states):
    """A client with a wrong password: what start() says, and the states."""
    c = KazooClient(hosts=hosts, timeout=10.0, connection_retry={"max_tries": 1, "delay": 0.1},
                    sasl_options={"mechanism": "DIGEST-MD5", "username": user, "password": password})
    c.add_listener(lambda s: states.append(str(s)))
    try:
        c.start(timeout=5)
        return "started, connected=%s" % c.connected
    finally:
        c.stop()
        c.close()


def outcome(fn):
    try:
        r = fn()
        return "ok" if r is None else "ok %r" % (r,)
    except KazooException as e:
        return type(e).__name__
    except Exception as e:  # timeouts of start() and the like
        return type(e).__name__


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    hosts = sys.argv[1]
    alice = client(hosts, "alice", "alice-secret")
    print("alice connected:", alice.connected)
    print("alice create /k sasl:alice:", outcome(lambda: alice.create("/k", b"kdata", acl=[make_acl("sasl", "alice", all=True)])))
    print("alice get /k:", outcome(lambda: alice.get("/k")[0]))
    print("alice getacl /k:", outcome(lambda: [(a.perms, a.id.scheme, a.id.id) for a in alice.get_acls("/k")[0]]))
    print("alice create /open:", outcome(lambda: alice.create("/open", b"o")))
    print("alice create /auth creator acl:", outcome(lambda: alice.create("/auth", b"a", acl=[make_acl("auth", "", all=True)])))
    print("alice getacl /auth:", outcome(lambda: [(a.perms, a.id.scheme, a.id.id) for a in alice.get_acls("/auth")[0]]))
    print("alice setacl /open sasl:bob read:", outcome(lambda: alice.set_acls("/open", [make_acl("sasl", "bob", read=True)]) and None))
    print("alice bad sasl id:", outcome(lambda: alice.create("/bad", b"", acl=[make_acl("sasl", "a@b@c", all=True)])))

    bob = client(hosts, "bob", "bob-secret")
    print("bob get /k:", outcome(lambda: bob.get("/k")[0]))
    print("bob get /open:", outcome(lambda: bob.get("/open")[0]))
    print("bob set /open:", outcome(lambda: bob.set("/open", b"x") and None))
    admin = client(hosts, "admin", "admin-secret")
    print("admin (superUser) get /k:", outcome(lambda: admin.get("/k")[0]))
    admin.stop()
    admin.close()
    anon = client(hosts)
    print("anonymous get /k:", outcome(lambda: anon.get("/k")[0]))
    print("anonymous get /open:", outcome(lambda: anon.get("/open")[0]))

    # A session that reconnects authenticates again and keeps its node.
    eph = client(hosts, "alice", "alice-secret")
    print("alice ephemeral:", outcome(lambda: eph.create("/eph", b"e", ephemeral=True, acl=[make_acl("sasl", "alice", all=True)])))
    sid = eph.client_id[0]
    states = []
    eph.add_listener(states.append)
    eph._connection._socket.shutdown(socket.SHUT_RDWR)  # the connection drops; kazoo reconnects to its session
    wait_for(lambda: "SUSPENDED" in states and eph.connected)
    print("after reconnect:", states, outcome(lambda: eph.get("/eph")[0]), "same session:", eph.client_id[0] == sid)

    for user, password in (("alice", "wrong"), ("mallory", "x")):
        states = []
        print("%s/%s:" % (user, password), outcome(lambda: failing(hosts, user, password, states)), states)
    print("alice still served:", outcome(lambda: alice.get("/k")[0]))
    for c in (alice, bob, anon, eph):
        c.stop()
        c.close()


if __name__ == "__main__":
    main()
