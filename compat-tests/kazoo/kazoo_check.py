#!/usr/bin/python3
"""kazoo recipes against one ZooKeeper server.

Usage: /usr/bin/python3 kazoo_check.py HOST:PORT

Runs Debian's python3-kazoo (2.8) against the server: Lock, Election,
Counter, Barrier, DoubleBarrier, Queue, LockingQueue, DataWatch,
ChildrenWatch, transactions, ephemeral cleanup on session close. Prints one
PASS/FAIL line per check and exits 1 if any check failed (2 on usage errors
or when no session can be opened). Every wait is bounded; the whole script
takes a few seconds against a healthy server.
"""

import sys
import threading
import time
import traceback
import uuid

from kazoo.client import KazooClient
from kazoo.exceptions import (BadVersionError, NoNodeError,
                              NodeExistsError, NotEmptyError)
from kazoo.recipe.barrier import Barrier, DoubleBarrier
from kazoo.recipe.counter import Counter
from kazoo.recipe.election import Election
from kazoo.recipe.lock import Lock
from kazoo.recipe.queue import LockingQueue, Queue
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

WAIT = 10.0  # seconds: bound on every wait for an event
failures = []
results = []


def check(name):
    def deco(fn):
        results.append((name, fn))
        return fn
    return deco


def wait_for(pred, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


def client(hosts):
    c = KazooClient(hosts=hosts, timeout=10.0, connection_retry={"max_tries": 3, "delay": 0.1},
                    command_retry={"max_tries": 3, "delay": 0.1})
    c.start(timeout=15)
    return c


class Env:
    def __init__(self, hosts):
        self.hosts = hosts
        self.root = "/kazoo-" + uuid.uuid4().hex[:8]
        self.zk = client(hosts)
        self.zk2 = client(hosts)
        self.zk.create(self.root)

    def path(self, name):
        return self.root + "/" + name

    def close(self):
        for c in (self.zk, self.zk2):
            try:
                c.stop()
                c.close()
            except Exception:
                pass


@check("crud")
def t_crud(env):
    p = env.path("crud")
    assert env.zk.create(p, b"one") == p
    data, st = env.zk.get(p)
    assert data == b"one" and st.version == 0, (data, st)
    st = env.zk.set(p, b"two", version=0)
    assert st.version == 1
    try:
        env.zk.set(p, b"x", version=0)
        raise AssertionError("set with a stale version succeeded")
    except BadVersionError:
        pass
    try:
        env.zk.create(p)
        raise AssertionError("second create succeeded")
    except NodeExistsError:
        pass
    env.zk.create(p + "/kid")
    try:
        env.zk.delete(p)
        raise AssertionError("delete of a node with children succeeded")
    except NotEmptyError:
        pass
    env.zk.delete(p, recursive=True)
    assert env.zk.exists(p) is None
    try:
        env.zk.get(p)
        raise AssertionError("get of a deleted node succeeded")
    except NoNodeError:
        pass
    # The suffix counts the children ever created under the parent (here
    # only "crud"), not the reported cversion, which is 2 (create + delete).
    assert env.zk.exists(env.root).cversion == 2
    seq = env.zk.create(env.path("seq-"), sequence=True)
    assert seq.endswith("-0000000001"), seq


@check("ensure_path and sequence numbers")
def t_ensure(env):
    p = env.path("a/b/c")
    env.zk.ensure_path(p)
    assert env.zk.exists(p)
    names = [env.zk.create(env.path("a/q-"), sequence=True) for _ in range(3)]
    nums = [int(n[-10:]) for n in names]
    assert nums == sorted(nums) and len(set(nums)) == 3, names


@check("Lock")
def t_lock(env):
    p = env.path("lock")
    l1 = Lock(env.zk, p, "one")
    l2 = Lock(env.zk2, p, "two")
    assert l1.acquire(timeout=WAIT)
    assert not l2.acquire(blocking=False)
    got = threading.Event()

    def take():
        if l2.acquire(timeout=WAIT):
            got.set()
    th = threading.Thread(target=take, daemon=True)
    th.start()
    assert wait_for(lambda: len(l1.contenders()) == 2), l1.contenders()
    assert l1.contenders() == ["one", "two"], l1.contenders()
    time.sleep(0.1)
    assert not got.is_set(), "second lock acquired while the first was held"
    l1.release()
    assert got.wait(WAIT), "second lock not acquired after release"
    th.join(WAIT)
    l2.release()


@check("Election")
def t_election(env):
    p = env.path("election")
    leaders = []
    e1 = Election(env.zk, p, "one")
    e2 = Election(env.zk2, p, "two")
    stop1 = threading.Event()
    stop2 = threading.Event()

    def lead(name, stop):
        leaders.append(name)
        stop.wait(WAIT)
    t1 = threading.Thread(target=e1.run, args=(lead, "one", stop1), daemon=True)
    t1.start()
    assert wait_for(lambda: leaders == ["one"]), leaders
    t2 = threading.Thread(target=e2.run, args=(lead, "two", stop2), daemon=True)
    t2.start()
    assert wait_for(lambda: len(e1.contenders()) == 2), e1.contenders()
    assert e1.contenders() == ["one", "two"], e1.contenders()
    stop1.set()
    t1.join(WAIT)
    assert wait_for(lambda: leaders == ["one", "two"]), leaders
    stop2.set()
    t2.join(WAIT)


@check("Counter")
def t_counter(env):
    p = env.path("counter")
    c1 = Counter(env.zk, p)
    c2 = Counter(env.zk2, p)
    errs = []

    def bump(c, n):
        try:
            for _ in range(n):
                c += 1
        except Exception as e:  # noqa: BLE001
            errs.append(e)
    ts = [threading.Thread(target=bump, args=(c, 25)) for c in (c1, c2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(WAIT * 3)
    assert not errs, errs
    assert c1.value == 50 and c2.value == 50, (c1.value, c2.value)
    c1 -= 8
    assert c2.value == 42
    f = Counter(env.zk, env.path("fcounter"), default=0.0)
    f += 2.5
    assert f.value == 2.5


@check("Barrier")
def t_barrier(env):
    p = env.path("barrier")
    b1 = Barrier(env.zk, p)
    b2 = Barrier(env.zk2, p)
    b1.create()
    passed = threading.Event()

    def waiter():
        if b2.wait(WAIT):
            passed.set()
    th = threading.Thread(target=waiter, daemon=True)
    th.start()
    time.sleep(0.2)
    assert not passed.is_set(), "passed a raised barrier"
    b1.remove()
    assert passed.wait(WAIT), "barrier removal did not release the waiter"
    th.join(WAIT)


@check("DoubleBarrier")
def t_double_barrier(env):
    p = env.path("dbarrier")
    order = []
    lock = threading.Lock()

    def member(zk, name):
        b = DoubleBarrier(zk, p, 2, identifier=name)
        b.enter()
        with lock:
            order.append("enter-" + name)
        b.leave()
        with lock:
            order.append("leave-" + name)
    ts = [threading.Thread(target=member, args=(z, n), daemon=True) for z, n in ((env.zk, "a"), (env.zk2, "b"))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(WAIT * 2)
    assert not any(t.is_alive() for t in ts), "double barrier hung: %r" % order
    assert sorted(order[:2]) == ["enter-a", "enter-b"], order


@check("Queue")
def t_queue(env):
    p = env.path("queue")
    q1 = Queue(env.zk, p)
    q2 = Queue(env.zk2, p)
    for i in range(5):
        q1.put(b"item%d" % i)
    q1.put(b"urgent", priority=10)
    q1.put(b"first", priority=1)
    assert len(q2) == 7, len(q2)
    got = [q2.get() for _ in range(7)]
    # Lower priority numbers first; the default priority is 100.
    assert got == [b"first", b"urgent", b"item0", b"item1", b"item2", b"item3", b"item4"], got
    assert q2.get() is None


@check("LockingQueue")
def t_locking_queue(env):
    p = env.path("lqueue")
    q1 = LockingQueue(env.zk, p)
    q2 = LockingQueue(env.zk2, p)
    q1.put_all([b"x", b"y"])
    assert q2.get(WAIT) == b"x"
    assert q1.get(0.5) == b"y"  # x is locked by q2, so q1 gets y
    assert q2.consume() and q1.consume()
    assert len(q1) == 0
    assert q1.get(0.3) is None


@check("DataWatch")
def t_datawatch(env):
    p = env.path("dw")
    seen = []

    @env.zk2.DataWatch(p)
    def watcher(data, stat, event=None):
        seen.append((data, stat.version if stat else None, event.type if event else None))
    assert wait_for(lambda: seen == [(None, None, None)]), seen
    env.zk.create(p, b"a")
    assert wait_for(lambda: len(seen) >= 2 and seen[-1][:2] == (b"a", 0)), seen
    env.zk.set(p, b"b")
    assert wait_for(lambda: seen[-1][:2] == (b"b", 1)), seen
    env.zk.delete(p)
    assert wait_for(lambda: seen[-1][:2] == (None, None)), seen
    types = [e for _, _, e in seen]
    assert types == [None, "CREATED", "CHANGED", "DELETED"], seen


@check("ChildrenWatch")
def t_childrenwatch(env):
    p = env.path("cw")
    env.zk.create(p)
    seen = []
    ChildrenWatch(env.zk2, p, func=lambda ch: seen.append(sorted(ch)))
    assert wait_for(lambda: seen == [[]]), seen
    env.zk.create(p + "/x")
    assert wait_for(lambda: seen[-1] == ["x"]), seen
    env.zk.create(p + "/y", ephemeral=True)
    assert wait_for(lambda: seen[-1] == ["x", "y"]), seen
    env.zk.delete(p + "/x")
    assert wait_for(lambda: seen[-1] == ["y"]), seen


@check("transactions")
def t_transactions(env):
    p = env.path("txn")
    env.zk.create(p, b"0")
    t = env.zk.transaction()
    t.create(p + "/a", b"a")
    t.set_data(p, b"1", version=0)
    t.check(p, 1)
    t.create(p + "/b", ephemeral=True)
    res = t.commit()
    assert res[0] == p + "/a" and res[1].version == 1 and res[2] is True and res[3] == p + "/b", res
    # A failing op rolls the whole transaction back.
    t = env.zk.transaction()
    t.create(p + "/c")
    t.check(p, 99)
    t.delete(p + "/a")
    res = t.commit()
    assert isinstance(res[1], BadVersionError), res
    assert env.zk.exists(p + "/c") is None and env.zk.exists(p + "/a") is not None
    assert sorted(env.zk.get_children(p)) == ["a", "b"]


@check("ephemerals vanish with their session")
def t_ephemeral(env):
    c = client(env.hosts)
    p = env.path("eph")
    c.create(p, b"x", ephemeral=True)
    st = env.zk.exists(p)
    assert st is not None and st.ephemeralOwner == c.client_id[0], (st, c.client_id)
    gone = threading.Event()
    env.zk.exists(p, watch=lambda ev: gone.set() if ev.type == "DELETED" else None)
    c.stop()
    c.close()
    assert gone.wait(WAIT), "no DELETED event after the owner's session closed"
    assert env.zk.exists(p) is None


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    hosts = sys.argv[1]
    try:
        env = Env(hosts)
    except Exception as e:  # noqa: BLE001
        print("FAIL connect %s: %s" % (hosts, e))
        return 2
    try:
        for name, fn in results:
            t0 = time.monotonic()
            try:
                fn(env)
                print("PASS %s (%.2fs)" % (name, time.monotonic() - t0))
            except Exception as e:  # noqa: BLE001
                failures.append(name)
                print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
                traceback.print_exc(limit=3, file=sys.stdout)
    finally:
        env.close()
    print("kazoo: %d checks, %d failed%s" % (len(results), len(failures), (": " + ", ".join(failures)) if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
