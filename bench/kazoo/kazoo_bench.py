#!/usr/bin/python3
"""kazoo's Lock as a client of `zklock bench`: the mutex scenarios, or one client of --scenario mixed.

--scenario uncontended | contended (the peer rows of `zklock bench --kazoo`,
measured as bench/curator measures Curator's InterProcessMutex):
  uncontended  one client, one Lock; min(N/10, 200) warm-up cycles, then N
               cycles; a sample is one acquire() + release()
  contended    K clients (one session and one thread each) on one Lock, N
               acquisitions in all, each client acquiring again right after its
               release; a sample is one acquire() as its caller waits for it
Prints one JSON line: backend "kazoo", scenario, clients, ops, p50_us, p99_us,
mean_us, ops_per_s, wall_s, and transactions: what the server committed during
the measured part, its srvr Zxid read before and after (null when unread).

Without --scenario (zklock bench --scenario mixed): runs beside the zklock and
Curator clients the bench starts on the same lock path. Connects, takes the
lock once (uncounted), prints "ready", reads the end of the run
(CLOCK_MONOTONIC nanoseconds) as one line from --go-fifo, then takes and
releases the lock until then, holding it --hold-us microseconds each time
(default 0), printing "s ENTER_NS LEAVE_NS" for each hold and "done COUNT"
last.

kazoo's log goes to stderr. Configured by argv only; it takes no credentials.
kazoo's Lock queues only behind the names it recognises: --extra-lock-pattern
-lock- (the default here) makes it wait for zklock's and Curator's nodes too.
"""
import argparse
import json
import logging
import math
import re
import socket
import sys
import threading
import time

from kazoo.client import KazooClient

ACQUIRE_TIMEOUT_S = 120


class Failed(Exception):
    pass


def connect(hosts):
    zk = KazooClient(hosts=hosts, timeout=10.0)
    zk.start(timeout=30)
    return zk


def acquire(lock):
    if not lock.acquire(timeout=ACQUIRE_TIMEOUT_S):
        raise Failed("no lock within %d s" % ACQUIRE_TIMEOUT_S)


def server_zxid(hosts):
    """The Zxid in srvr's answer from the first server of `hosts`, or None."""
    first = hosts.split(",")[0].split("/")[0]
    host, _, port = first.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(b"srvr")
            answer = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
    except (OSError, ValueError):
        return None
    m = re.search(rb"Zxid: 0x([0-9a-fA-F]+)", answer)
    return int(m.group(1), 16) if m else None


def transactions(before, after):
    """The transactions between two server_zxid() readings, or None (unread, or a new epoch)."""
    if before is None or after is None or before >> 32 != after >> 32:
        return None
    return after - before


def percentile(sorted_ns, p):
    """The nearest-rank percentile in microseconds, as the Curator harness takes it; None without samples."""
    if not sorted_ns:
        return None
    return sorted_ns[min(len(sorted_ns) - 1, max(0, math.ceil(p * len(sorted_ns)) - 1))] / 1000.0


def result(scenario, clients, samples_ns, wall_ns):
    s = sorted(samples_ns)
    wall_s = wall_ns / 1e9
    return {"backend": "kazoo", "scenario": scenario, "clients": clients, "ops": len(s),
            "p50_us": percentile(s, 0.50), "p99_us": percentile(s, 0.99),
            "mean_us": (sum(s) / len(s) / 1000.0) if s else None,
            "ops_per_s": len(s) / wall_s if wall_s > 0 else 0.0, "wall_s": wall_s}


def uncontended(args, patterns):
    zk = connect(args.connect)
    try:
        lock = zk.Lock(args.path, "kazoo-bench", extra_lock_patterns=patterns)
        for _ in range(min(args.ops // 10, 200)):
            acquire(lock)
            lock.release()
        samples = []
        zxid_before = server_zxid(args.connect)
        start = time.monotonic_ns()
        for _ in range(args.ops):
            t0 = time.monotonic_ns()
            acquire(lock)
            lock.release()
            samples.append(time.monotonic_ns() - t0)
        wall = time.monotonic_ns() - start
        r = result("uncontended", 1, samples, wall)
        r["measured_transactions"] = transactions(zxid_before, server_zxid(args.connect))
        return r
    finally:
        zk.stop()
        zk.close()


def contended(args, patterns):
    k = max(1, args.clients)
    clients, locks = [], []
    try:
        for _ in range(k):
            zk = connect(args.connect)
            clients.append(zk)
            lock = zk.Lock(args.path, "kazoo-bench", extra_lock_patterns=patterns)
            # One uncounted cycle per client: creates the parent path first.
            acquire(lock)
            lock.release()
            locks.append(lock)
        remaining = [args.ops]
        guard = threading.Lock()
        samples = [[] for _ in range(k)]
        errors = []
        # A worker that never reaches the barrier (or a main thread that fails
        # first) breaks it for everyone after the timeout: nobody waits forever.
        barrier = threading.Barrier(k + 1, timeout=ACQUIRE_TIMEOUT_S)

        def worker(i):
            try:
                barrier.wait()
                while not errors:
                    with guard:
                        if remaining[0] <= 0:
                            return
                        remaining[0] -= 1
                    t0 = time.monotonic_ns()
                    acquire(locks[i])
                    samples[i].append(time.monotonic_ns() - t0)
                    locks[i].release()
            except Exception as e:  # reported once every worker has stopped
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(i,), name="bench-%d" % i, daemon=True) for i in range(k)]
        for t in threads:
            t.start()
        zxid_before = server_zxid(args.connect)
        barrier.wait()
        start = time.monotonic_ns()
        for t in threads:
            t.join()
        wall = time.monotonic_ns() - start
        zxid_after = server_zxid(args.connect)
        if errors:
            raise Failed("a client failed: %r" % errors[0])
        r = result("contended", k, [s for mine in samples for s in mine], wall)
        r["measured_transactions"] = transactions(zxid_before, zxid_after)
        return r
    finally:
        for zk in clients:
            zk.stop()
            zk.close()


def mixed(args, patterns):
    zk = connect(args.connect)
    try:
        lock = zk.Lock(args.path, "kazoo-bench", extra_lock_patterns=patterns)
        acquire(lock)
        lock.release()
        print("ready", flush=True)
        with open(args.go_fifo, "r", encoding="ascii") as f:
            end = int(f.readline())
        holds = []
        while time.monotonic_ns() < end:
            acquire(lock)
            enter = time.monotonic_ns()
            if args.hold_us > 0:
                time.sleep(args.hold_us / 1e6)
            leave = time.monotonic_ns()
            lock.release()
            holds.append((enter, leave))
        out = "".join("s %d %d\n" % h for h in holds)
        sys.stdout.write(out + "done %d\n" % len(holds))
        sys.stdout.flush()
    finally:
        zk.stop()
        zk.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connect", required=True, help="HOST:PORT of the ZooKeeper server")
    ap.add_argument("--path", required=True, help="lock path")
    ap.add_argument("--scenario", choices=["uncontended", "contended"],
                    help="run a mutex scenario and print its result (otherwise: one client of --scenario mixed)")
    ap.add_argument("--clients", type=int, default=8, help="contended: clients (sessions and threads)")
    ap.add_argument("--ops", type=int, default=2000, help="measured acquisitions")
    ap.add_argument("--go-fifo", help="mixed: file to read the end of the run from")
    ap.add_argument("--hold-us", type=int, default=0, help="mixed: how long each hold lasts, in microseconds")
    ap.add_argument("--extra-lock-pattern", action="append", default=None,
                    help="kazoo's extra_lock_patterns (default: -lock-)")
    args = ap.parse_args()
    patterns = tuple(args.extra_lock_pattern if args.extra_lock_pattern is not None else ["-lock-"])
    if args.scenario is None and args.go_fifo is None:
        ap.error("--go-fifo is required without --scenario")
    if args.ops < 1:
        ap.error("--ops must be at least 1")

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        if args.scenario == "uncontended":
            print(json.dumps(uncontended(args, patterns)), flush=True)
        elif args.scenario == "contended":
            print(json.dumps(contended(args, patterns)), flush=True)
        else:
            mixed(args, patterns)
    except Failed as e:
        print("kazoo_bench: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
