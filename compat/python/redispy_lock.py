"""redis-py's redis.lock.Lock against redlock-proxy (REDLOCK_ADDR=host:port).

Run by compat_test.go with Debian's python3-redis. Exits non-zero on the
first failed check.
"""
import os
import sys
import threading
import time

import redis
from redis.exceptions import LockNotOwnedError

host, port = os.environ["REDLOCK_ADDR"].rsplit(":", 1)
r = redis.Redis(host=host, port=int(port), socket_timeout=10)


def check(cond, what):
    if not cond:
        print("FAIL:", what, flush=True)
        sys.exit(1)
    print("ok:", what, flush=True)


# Non-blocking acquire, and a second owner refused.
a = r.lock("py:a", timeout=5)
check(a.acquire(blocking=False), "non-blocking acquire")
b = r.lock("py:a", timeout=5)
check(not b.acquire(blocking=False), "a second owner is refused while the first holds the lock")
check(a.locked() and a.owned() and not b.owned(), "locked() and owned() read the owner by quorum")
check(4000 < r.pttl("py:a") <= 5000, "PTTL shows the 5 s asked for")

# extend (add), extend (replace), reacquire: PTTL moves each time.
check(a.extend(5), "extend adds 5 s")
check(9000 < r.pttl("py:a") <= 10000, "PTTL after adding 5 s to about 5 s")
check(a.extend(3, replace_ttl=True), "extend replaces the TTL with 3 s")
check(2000 < r.pttl("py:a") <= 3000, "PTTL after replacing it with 3 s")
check(a.reacquire(), "reacquire resets the TTL to the lock's timeout")
check(4000 < r.pttl("py:a") <= 5000, "PTTL after reacquire")

# Release: only the owner's token deletes it.
try:
    b.release()
    check(False, "releasing a lock one does not hold must raise")
except Exception:
    check(r.get("py:a") == a.local.token, "a foreign release left the lock in place")
a.release()
check(r.get("py:a") is None, "release frees the lock")
check(b.acquire(blocking=False), "the other owner takes it once freed")
b.release()

# Expiry: the lock is gone, and releasing or extending it raises
# LockNotOwnedError (one lock each: release forgets the token client-side).
for name in ("release", "extend"):
    c = r.lock("py:c:" + name, timeout=0.3)
    check(c.acquire(blocking=False), "short lock acquired")
    time.sleep(0.5)
    check(r.get("py:c:" + name) is None, "the short lock expired")
    try:
        c.release() if name == "release" else c.extend(1)
        check(False, name + " after expiry must raise LockNotOwnedError")
    except LockNotOwnedError:
        check(True, name + " after expiry raises LockNotOwnedError")

# Blocking acquire waits for the holder's release.
holder = r.lock("py:w", timeout=5, thread_local=False)  # released from a timer thread
check(holder.acquire(blocking=False), "holder acquired")
threading.Timer(0.5, holder.release).start()
waiter = r.lock("py:w", timeout=5, sleep=0.05)
start = time.monotonic()
check(waiter.acquire(blocking=True, blocking_timeout=5), "a blocking acquire gets the lock once released")
check(time.monotonic() - start >= 0.4, "... and only after the release")
waiter.release()
late = r.lock("py:w2", timeout=5)
late.acquire()
check(not r.lock("py:w2", timeout=5, sleep=0.05).acquire(blocking_timeout=0.3), "blocking_timeout gives up")
late.release()

# The native lock commands through redis-py's generic call, as README
# ("Fencing tokens") shows them.
t1 = r.execute_command("LOCK.ACQUIRE", "py:native", "p1", 5000)
check(isinstance(t1, int) and t1 > 0, "LOCK.ACQUIRE answers a fencing token")
check(r.execute_command("LOCK.ACQUIRE", "py:native", "p2", 5000) is None, "a second owner gets None")
check(r.execute_command("LOCK.TOKEN", "py:native") == t1, "LOCK.TOKEN reads the holder's token")
check(r.execute_command("LOCK.RELEASE", "py:native", "p1") == 1, "LOCK.RELEASE by the owner")
t2 = r.execute_command("LOCK.ACQUIRE", "py:native", "p2", 5000)
check(isinstance(t2, int) and t2 > t1, "the next owner's token is larger")
check(r.execute_command("LOCK.RELEASE", "py:native", "p2") == 1, "and released")

# WAIT: queued behind the holder, granted when it releases (another thread);
# SESSION: held while this connection is open, released when it closes.
r.execute_command("LOCK.ACQUIRE", "py:wait", "p1", 5000)
threading.Timer(0.3, lambda: r.execute_command("LOCK.RELEASE", "py:wait", "p1")).start()
t3 = r.execute_command("LOCK.ACQUIRE", "py:wait", "p2", 30000, "WAIT", 5000)
check(isinstance(t3, int) and t3 > t2, "WAIT is granted at the holder's release")
check(r.execute_command("LOCK.ACQUIRE", "py:wait", "p3", 30000, "WAIT", 200) is None, "WAIT gives up with None")
r.execute_command("LOCK.RELEASE", "py:wait", "p2")
s = redis.Redis(host=host, port=int(port), single_connection_client=True)
check(s.execute_command("LOCK.ACQUIRE", "py:session", "p1", 3000, "SESSION") > t3, "SESSION lock granted")
time.sleep(4)
check(r.execute_command("LOCK.TOKEN", "py:session") is not None, "a session lock outlives its TTL while its connection is open")
s.close()
s.connection_pool.disconnect()  # close() only hands the connection back to its pool
deadline = time.time() + 5
while r.execute_command("LOCK.TOKEN", "py:session") is not None and time.time() < deadline:
    time.sleep(0.05)
check(r.execute_command("LOCK.TOKEN", "py:session") is None, "closing the connection releases it")

# No timeout (r.lock(name), redis-py's default): SET NX without a TTL takes a
# connection-bound lock. PTTL -1 as on one Redis, held while its connection is
# open (past the proxy's lease, 10 s by default: REDLOCK_BOUND_WAIT seconds
# here), released with redis-py's script, freed when the connection closes.
nt = redis.Redis(host=host, port=int(port), single_connection_client=True)
forever = nt.lock("py:forever")
check(forever.acquire(blocking=False), "a lock without timeout is granted")
check(r.pttl("py:forever") == -1 and r.ttl("py:forever") == -1, "PTTL and TTL answer -1, from another connection too")
check(not r.lock("py:forever").acquire(blocking=False), "a second owner is refused")
time.sleep(float(os.environ.get("REDLOCK_BOUND_WAIT", "1")))
check(forever.locked() and forever.owned(), "still held after the wait, its connection idle")
try:
    forever.extend(10)
    check(False, "extending a lock without timeout must raise (client-side)")
except Exception:
    check(True, "extend refused client-side, as redis-py does")
forever.release()
check(r.get("py:forever") is None, "released by redis-py's script")
check(forever.acquire(blocking=False), "taken again")
nt.close()
nt.connection_pool.disconnect()
deadline = time.time() + 15
while r.get("py:forever") is not None and time.time() < deadline:
    time.sleep(0.05)
check(r.get("py:forever") is None, "closing its connection frees a lock without timeout")
with r.lock("py:forever", blocking_timeout=5) as again:
    check(r.pttl("py:forever") == -1, "the context manager's lock without timeout reads PTTL -1")

# Threads contending: a read-modify-write under the lock must never interleave.
state = {"n": 0, "inside": 0, "overlap": False}


def worker():
    for _ in range(15):
        with r.lock("py:counter", timeout=5, sleep=0.01, blocking_timeout=30):
            state["inside"] += 1
            if state["inside"] > 1:
                state["overlap"] = True
            n = state["n"]
            time.sleep(0.002)
            state["n"] = n + 1
            state["inside"] -= 1


threads = [threading.Thread(target=worker) for _ in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
check(not state["overlap"] and state["n"] == 90, "6 threads x 15 locked increments: %d, no overlap" % state["n"])
print("redis-py", redis.__version__, "passed", flush=True)
