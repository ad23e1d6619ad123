#!/usr/bin/python3
"""A kazoo lock client for zklock's interop tests (tests/integration/test_interop_kazoo.cpp).

Takes one kazoo recipe on a lock path and reports on stdout, one line per event,
flushed, with CLOCK_MONOTONIC nanoseconds (the clock the C++ test reads too):

  ready NAME T                                connected, before the first acquire
  predecessor NAME NODE                       it looked at the queue and waits for NODE ("-": for nobody)
  acquired NAME T                             the lock is held from T on
  releasing NAME T                            the lock is held until T (then released)
  done NAME COUNT                             finished; exit status 0

  --mode churn   acquire and release --iterations times, reading the lock path
                 once per critical section (a server round trip while holding);
                 with --wait-for-go it starts on SIGUSR1 (after "ready")
  --mode hold    acquire once, hold until SIGUSR1, release, exit

--recipe election runs a kazoo Election (hold mode only): "acquired" when its
leader function starts, which holds until SIGUSR1. kazoo's Election takes no
extra_lock_patterns.
--recipe semaphore takes a lease of a kazoo Semaphore with --max-leases leases
(hold mode only; no "predecessor" lines: kazoo's Semaphore queues on its own
lock beside the path).

--tls-ca FILE (with --tls-cert FILE --tls-key FILE) connects over TLS
(kazoo's use_ssl) to a secure client port, checking the server's certificate.

Anything else it prints (kazoo's log) goes to stderr. Configured by argv only;
it takes no credentials.
"""
import argparse
import logging
import signal
import sys
import time

from kazoo.client import KazooClient


def emit(*words):
    print(*words, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connect", required=True, help="HOST:PORT of the ZooKeeper server")
    ap.add_argument("--path", required=True, help="lock path, e.g. /locks/job")
    ap.add_argument("--name", required=True, help="this client's name in the report")
    ap.add_argument("--recipe", choices=["lock", "read", "write", "election", "semaphore"], default="lock",
                    help="kazoo Lock, ReadLock, WriteLock, Election or Semaphore")
    ap.add_argument("--max-leases", type=int, default=1, help="--recipe semaphore: its max_leases")
    ap.add_argument("--mode", choices=["churn", "hold"], default="hold")
    ap.add_argument("--iterations", type=int, default=1)
    ap.add_argument("--extra-lock-pattern", action="append", default=[],
                    help="kazoo's extra_lock_patterns: another dialect's marker this client queues behind")
    ap.add_argument("--wait-for-go", action="store_true", help="churn mode: start on SIGUSR1")
    ap.add_argument("--timeout", type=float, default=60.0, help="give up an acquire after this many seconds")
    ap.add_argument("--tls-ca", help="connect over TLS, trusting this CA file (PEM)")
    ap.add_argument("--tls-cert", help="with --tls-ca: the client certificate (PEM)")
    ap.add_argument("--tls-key", help="with --tls-ca: its key (PEM)")
    args = ap.parse_args()
    if args.iterations < 1:
        ap.error("--iterations must be at least 1")
    if args.recipe in ("election", "semaphore") and (args.mode != "hold" or args.extra_lock_pattern):
        ap.error("--recipe %s takes --mode hold and no --extra-lock-pattern" % args.recipe)

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    # SIGUSR1 (hold mode: release; churn mode: go) is taken with sigwait; blocked before kazoo
    # starts its threads, so they inherit the mask and none of them takes it.
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])

    tls = {}
    if args.tls_ca:
        tls = dict(use_ssl=True, verify_certs=True, ca=args.tls_ca, certfile=args.tls_cert, keyfile=args.tls_key)
    zk = KazooClient(hosts=args.connect, timeout=10.0, **tls)
    zk.start(timeout=30)
    election = None
    if args.recipe == "election":
        election = zk.Election(args.path, args.name)
        lock = election.lock  # the kazoo Lock an Election runs on
    elif args.recipe == "semaphore":
        lock = zk.Semaphore(args.path, args.name, max_leases=args.max_leases)
    else:
        recipe = {"lock": zk.Lock, "read": zk.ReadLock, "write": zk.WriteLock}[args.recipe]
        lock = recipe(args.path, args.name, extra_lock_patterns=tuple(args.extra_lock_pattern))
    # Report each queue decision: kazoo's Lock decides in _get_predecessor (kazoo
    # 2.8, recipe/lock.py), a private method; wrapped here for the report only.
    if args.recipe != "semaphore":
        decide = lock._get_predecessor

        def traced(node):
            predecessor = decide(node)
            emit("predecessor", args.name, predecessor or "-")
            return predecessor

        lock._get_predecessor = traced
    emit("ready", args.name, time.monotonic_ns())
    if args.wait_for_go:
        signal.sigwait([signal.SIGUSR1])
    count = 0

    def section():
        emit("acquired", args.name, time.monotonic_ns())
        if args.mode == "churn":
            zk.get_children(args.path)
        else:
            signal.sigwait([signal.SIGUSR1])
        emit("releasing", args.name, time.monotonic_ns())

    try:
        if election is not None:
            election.run(section)  # returns once section() returned and the node is deleted
            count = 1
        else:
            for _ in range(args.iterations if args.mode == "churn" else 1):
                if not lock.acquire(timeout=args.timeout):
                    print("kazoo_peer: %s: no lock within %ss" % (args.name, args.timeout), file=sys.stderr)
                    return 1
                section()
                lock.release()
                count += 1
    finally:
        zk.stop()
        zk.close()
    emit("done", args.name, count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
