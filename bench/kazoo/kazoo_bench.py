#!/usr/bin/python3
"""One kazoo Lock client for `zklock bench --scenario mixed`.

Runs beside the zklock and Curator clients the bench starts on the same lock
path. Connects, takes the lock once (uncounted), prints "ready", reads the end
of the run (CLOCK_MONOTONIC nanoseconds) as one line from --go-fifo, then takes
and releases the lock until then, holding it --hold-us microseconds each time
(default 0), printing "s ENTER_NS LEAVE_NS" for each hold and "done COUNT" last. kazoo's log goes to stderr. Configured by argv only; it
takes no credentials.

kazoo's Lock queues only behind the names it recognises: --extra-lock-pattern
-lock- (the default here) makes it wait for zklock's and Curator's nodes too.
"""
import argparse
import logging
import sys
import time

from kazoo.client import KazooClient


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connect", required=True, help="HOST:PORT of the ZooKeeper server")
    ap.add_argument("--path", required=True, help="lock path")
    ap.add_argument("--go-fifo", required=True, help="file to read the end of the run from")
    ap.add_argument("--hold-us", type=int, default=0, help="how long each hold lasts, in microseconds")
    ap.add_argument("--extra-lock-pattern", action="append", default=None,
                    help="kazoo's extra_lock_patterns (default: -lock-)")
    args = ap.parse_args()
    patterns = tuple(args.extra_lock_pattern if args.extra_lock_pattern is not None else ["-lock-"])

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    zk = KazooClient(hosts=args.connect, timeout=10.0)
    zk.start(timeout=30)
    try:
        lock = zk.Lock(args.path, "kazoo-bench", extra_lock_patterns=patterns)
        if not lock.acquire(timeout=120):
            print("kazoo_bench: no lock within 120 s", file=sys.stderr)
            return 1
        lock.release()
        print("ready", flush=True)
        with open(args.go_fifo, "r", encoding="ascii") as f:
            end = int(f.readline())
        holds = []
        while time.monotonic_ns() < end:
            if not lock.acquire(timeout=120):
                print("kazoo_bench: no lock within 120 s", file=sys.stderr)
                return 1
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
