// Reference benchmark: Apache Curator's InterProcessMutex, for comparison with
// `zklock bench` against the same ZooKeeper ensemble in the same run.
//
// Usage:
//   java -cp <curator classpath>:<dir> CuratorBench \
//     --connect HOSTS --scenario uncontended|contended --clients K --ops N --path /bench/...
//     [--warmup W]                                                        (uncontended, contended)
//     [--lock-paths M --order sorted|unsorted --timeout-ms T --seed S]   (scenario multi)
//
// uncontended: one client, one InterProcessMutex; W warm-up acquire()+release()
//              cycles (not counted; default min(N/10, 200)), then N measured
//              cycles. Latency = one acquire()+release() cycle. Reports "clients":1.
// contended:   K clients (one ZooKeeper session and one thread each), each with
//              its own InterProcessMutex on the same path. Every client does one
//              uncounted acquire/release first (sequentially), then the threads
//              take W unmeasured acquisitions in all, contending as in the
//              measured run (a JVM warmed up like a long-running service's),
//              then all start together again and loop until N acquisitions have
//              been claimed in all. Latency = time from acquire() call to its return.
//
// Both report "warmup" (W) and "transactions": what the server committed during
// the measured part, its srvr Zxid read before and after (null when unread).
// multi:       dining philosophers with InterProcessMultiLock: K clients, each
//              locking a random subset (2 or 3) of M lock paths under PATH
//              (PATH/p0 ... PATH/pM-1), in sorted or in random order, with
//              acquire(T ms) (which Curator gives each lock of the set in turn),
//              holding 1 ms, until N acquisitions have been claimed in all.
//              Latency = time from acquire() to its return, for the ones that
//              acquired; "timeouts" counts the acquire() calls that returned
//              false (deadlocks, with unsorted orders).
//
// mixed:       K clients beside the zklock and kazoo clients that `zklock bench
//              --scenario mixed` runs on the same path at the same time (--go-fifo
//              FILE, --ops ignored). Each client takes the lock once, then it
//              prints "ready", reads the end of the run (CLOCK_MONOTONIC ns, as
//              System.nanoTime()) as one line from FILE, takes and releases the
//              lock until then, holding it for --hold-us microseconds each time
//              (default 0), and prints "s ENTER_NS LEAVE_NS" for each hold and
//              "done COUNT" last.
//
// Output: exactly one JSON line on stdout (mixed: the lines above); errors go
// to stderr with exit code 1.
// Run with slf4j-nop (or no slf4j binding) on the classpath to keep stdout clean.

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorBench {
    private static final int SESSION_TIMEOUT_MS = 10000;
    private static final int CONNECTION_TIMEOUT_MS = 15000;
    private static final long CONNECT_WAIT_MS = 15000;
    // acquire() with a generous bound instead of forever, so a broken server
    // fails the benchmark instead of hanging it (same code path in Curator).
    private static final long ACQUIRE_TIMEOUT_S = 120;

    private CuratorBench() {}

    private static void usage(String msg) {
        if (msg != null) System.err.println("CuratorBench: " + msg);
        System.err.println("usage: CuratorBench --connect HOSTS --scenario uncontended|contended"
                + " --clients K --ops N --path /bench/...");
        System.exit(2);
    }

    public static void main(String[] args) {
        String connect = null, scenario = null, path = null, order = "sorted", goFifo = null;
        int clients = 1, ops = -1, lockPaths = 5, warmup = -1;
        long holdUs = 0;
        long timeoutMs = 2000, seed = 1;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("-h") || a.equals("--help")) usage(null);
            if (i + 1 >= args.length) usage("missing value for " + a);
            String v = args[++i];
            try {
                switch (a) {
                    case "--connect": connect = v; break;
                    case "--scenario": scenario = v; break;
                    case "--clients": clients = Integer.parseInt(v); break;
                    case "--ops": ops = Integer.parseInt(v); break;
                    case "--warmup": warmup = Integer.parseInt(v); break;
                    case "--path": path = v; break;
                    case "--go-fifo": goFifo = v; break;
                    case "--hold-us": holdUs = Long.parseLong(v); break;
                    case "--lock-paths": lockPaths = Integer.parseInt(v); break;
                    case "--order": order = v; break;
                    case "--timeout-ms": timeoutMs = Long.parseLong(v); break;
                    case "--seed": seed = Long.parseLong(v); break;
                    default: usage("unknown option " + a);
                }
            } catch (NumberFormatException e) {
                usage("not a number for " + a + ": " + v);
            }
        }
        if (connect == null || connect.isEmpty()) usage("--connect is required");
        if (scenario == null) usage("--scenario is required");
        if (path == null || !path.startsWith("/") || (path.length() > 1 && path.endsWith("/")))
            usage("--path must be an absolute ZooKeeper path");
        if (ops <= 0) usage("--ops must be > 0");
        if (clients <= 0) usage("--clients must be > 0");
        if (warmup < 0) warmup = Math.min(ops / 10, 200);

        try {
            String json;
            switch (scenario) {
                case "uncontended": json = uncontended(connect, ops, path, warmup); break;
                case "contended": json = contended(connect, clients, ops, path, warmup); break;
                case "multi":
                    if (lockPaths < 2) usage("--lock-paths must be >= 2");
                    if (!order.equals("sorted") && !order.equals("unsorted")) usage("--order sorted|unsorted");
                    json = multi(connect, clients, ops, path, lockPaths, order.equals("sorted"), timeoutMs, seed);
                    break;
                case "mixed":
                    if (goFifo == null) usage("--scenario mixed needs --go-fifo");
                    mixed(connect, clients, path, goFifo, holdUs);
                    System.exit(0);
                    return;
                default: usage("unknown scenario " + scenario); return;
            }
            System.out.println(json);
            System.out.flush();
            System.exit(0);
        } catch (Throwable t) {
            System.err.println("CuratorBench: failed: " + t);
            t.printStackTrace(System.err);
            System.exit(1);
        }
    }

    private static CuratorFramework newClient(String connect) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(SESSION_TIMEOUT_MS)
                .connectionTimeoutMs(CONNECTION_TIMEOUT_MS)
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        c.start();
        if (!c.blockUntilConnected((int) CONNECT_WAIT_MS, TimeUnit.MILLISECONDS)) {
            c.close();
            throw new IllegalStateException("could not connect to " + connect
                    + " within " + CONNECT_WAIT_MS + " ms");
        }
        return c;
    }

    private static void acquire(InterProcessMutex m) throws Exception {
        if (!m.acquire(ACQUIRE_TIMEOUT_S, TimeUnit.SECONDS))
            throw new IllegalStateException("acquire() timed out after " + ACQUIRE_TIMEOUT_S + " s");
    }

    // The Zxid in srvr's answer from the first server of `connect`, or -1: what
    // the server has committed, read around the measured part of a run.
    private static long serverZxid(String connect) {
        String first = connect.split(",")[0];
        int slash = first.indexOf('/');
        if (slash >= 0) first = first.substring(0, slash);
        int colon = first.lastIndexOf(':');
        if (colon < 0) return -1;
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(first.substring(0, colon), Integer.parseInt(first.substring(colon + 1))),
                    5000);
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder answer = new StringBuilder();
            byte[] buf = new byte[4096];
            for (int n; (n = in.read(buf)) > 0;) answer.append(new String(buf, 0, n, StandardCharsets.US_ASCII));
            Matcher m = Pattern.compile("Zxid: 0x([0-9a-fA-F]+)").matcher(answer);
            return m.find() ? Long.parseLong(m.group(1), 16) : -1;
        } catch (Exception e) {
            return -1;
        }
    }

    // The transactions between two readings of serverZxid(), or null (unread, or a new epoch).
    private static String transactions(long before, long after) {
        if (before < 0 || after < 0 || (before >>> 32) != (after >>> 32)) return "null";
        return Long.toString(after - before);
    }

    // `json` (one object) with the warm-up's size and the measured part's transactions.
    private static String withServerWork(String json, int warmup, long before, long after) {
        return json.replaceFirst("}$", String.format(Locale.ROOT, ",\"warmup\":%d,\"measured_transactions\":%s}", warmup,
                transactions(before, after)));
    }

    private static String uncontended(String connect, int ops, String path, int warmup) throws Exception {
        CuratorFramework c = newClient(connect);
        try {
            InterProcessMutex m = new InterProcessMutex(c, path);
            for (int i = 0; i < warmup; i++) {
                acquire(m);
                m.release();
            }
            long zxidBefore = serverZxid(connect);
            long[] lat = new long[ops];
            long start = System.nanoTime();
            for (int i = 0; i < ops; i++) {
                long t0 = System.nanoTime();
                acquire(m);
                m.release();
                lat[i] = System.nanoTime() - t0;
            }
            long wall = System.nanoTime() - start;
            long zxidAfter = serverZxid(connect);
            return withServerWork(result("uncontended", 1, ops, lat, wall), warmup, zxidBefore, zxidAfter);
        } finally {
            c.close();
        }
    }

    // The K clients' threads take `ops` acquisitions in all, each acquiring
    // again right after its release; each acquire()'s wait goes into lat[client]
    // (when lat is not null) and count[client]. Returns the wall time.
    private static long contend(InterProcessMutex[] ms, int ops, long[][] lat, int[] count) throws Exception {
        int k = ms.length;
        AtomicInteger remaining = new AtomicInteger(ops);
        AtomicReference<Throwable> err = new AtomicReference<>();
        CyclicBarrier barrier = new CyclicBarrier(k + 1);
        Thread[] ts = new Thread[k];
        for (int i = 0; i < k; i++) {
            final int id = i;
            ts[i] = new Thread(() -> {
                try {
                    barrier.await();
                    InterProcessMutex m = ms[id];
                    int n = 0;
                    while (err.get() == null && remaining.getAndDecrement() > 0) {
                        long t0 = System.nanoTime();
                        acquire(m);
                        if (lat != null) lat[id][n] = System.nanoTime() - t0;
                        n++;
                        m.release();
                    }
                    if (count != null) count[id] = n;
                } catch (Throwable t) {
                    err.compareAndSet(null, t);
                }
            }, "bench-" + i);
            ts[i].start();
        }
        barrier.await();
        long start = System.nanoTime();
        for (Thread t : ts) t.join();
        long wall = System.nanoTime() - start;
        if (err.get() != null) throw new Exception("worker failed", err.get());
        return wall;
    }

    private static String contended(String connect, int k, int ops, String path, int warmup) throws Exception {
        List<CuratorFramework> cs = new ArrayList<>(k);
        try {
            InterProcessMutex[] ms = new InterProcessMutex[k];
            for (int i = 0; i < k; i++) {
                CuratorFramework c = newClient(connect);
                cs.add(c);
                ms[i] = new InterProcessMutex(c, path);
                // One uncounted cycle per client: creates the parent path and
                // loads the code path before measurement starts.
                acquire(ms[i]);
                ms[i].release();
            }
            // The JIT compiles the contended path (watches, waits, handoffs) too.
            if (warmup > 0) contend(ms, warmup, null, null);

            long zxidBefore = serverZxid(connect);
            long[][] lat = new long[k][ops];
            int[] count = new int[k];
            long wall = contend(ms, ops, lat, count);
            long zxidAfter = serverZxid(connect);

            int total = 0;
            for (int n : count) total += n;
            long[] all = new long[total];
            int off = 0;
            for (int i = 0; i < k; i++) {
                System.arraycopy(lat[i], 0, all, off, count[i]);
                off += count[i];
            }
            return withServerWork(result("contended", k, ops, all, wall), warmup, zxidBefore, zxidAfter);
        } finally {
            for (CuratorFramework c : cs) {
                try { c.close(); } catch (Throwable ignored) { }
            }
        }
    }

    private static String multi(String connect, int k, int ops, String path, int m, boolean sorted, long timeoutMs,
                                long seed) throws Exception {
        List<CuratorFramework> cs = new ArrayList<>(k);
        try {
            List<String> all = new ArrayList<>();
            for (int i = 0; i < m; i++) all.add(path + "/p" + i);
            for (int i = 0; i < k; i++) cs.add(newClient(connect));
            AtomicInteger remaining = new AtomicInteger(ops);
            AtomicInteger timeouts = new AtomicInteger();
            long[][] lat = new long[k][ops];
            int[] count = new int[k];
            AtomicReference<Throwable> err = new AtomicReference<>();
            CyclicBarrier barrier = new CyclicBarrier(k + 1);
            Thread[] ts = new Thread[k];
            for (int i = 0; i < k; i++) {
                final int id = i;
                ts[i] = new Thread(() -> {
                    try {
                        Random rng = new Random(seed * 1000 + id);
                        barrier.await();
                        int n = 0;
                        while (err.get() == null && remaining.getAndDecrement() > 0) {
                            List<String> set = new ArrayList<>(all);
                            Collections.shuffle(set, rng);
                            set = new ArrayList<>(set.subList(0, Math.min(m, 2 + rng.nextInt(2))));
                            if (sorted) Collections.sort(set);
                            InterProcessMultiLock lock = new InterProcessMultiLock(cs.get(id), set);
                            long t0 = System.nanoTime();
                            if (!lock.acquire(timeoutMs, TimeUnit.MILLISECONDS)) {
                                timeouts.incrementAndGet();
                                continue;
                            }
                            lat[id][n++] = System.nanoTime() - t0;
                            Thread.sleep(1);
                            lock.release();
                        }
                        count[id] = n;
                    } catch (Throwable t) {
                        err.compareAndSet(null, t);
                    }
                }, "bench-" + i);
                ts[i].start();
            }
            barrier.await();
            long start = System.nanoTime();
            for (Thread t : ts) t.join();
            long wall = System.nanoTime() - start;
            if (err.get() != null) throw new Exception("worker failed", err.get());
            int total = 0;
            for (int n : count) total += n;
            long[] got = new long[total];
            int off = 0;
            for (int i = 0; i < k; i++) {
                System.arraycopy(lat[i], 0, got, off, count[i]);
                off += count[i];
            }
            String r = result("multi", k, total, got, wall);
            String label = sorted ? "curator InterProcessMultiLock, sorted" : "curator InterProcessMultiLock, unsorted";
            return r.replace("\"backend\":\"curator\"", "\"backend\":\"" + label + "\"")
                    .replaceFirst("}$", String.format(Locale.ROOT, ",\"timeouts\":%d,\"paths\":%d,\"timeout_ms\":%d}",
                            timeouts.get(), m, timeoutMs));
        } finally {
            for (CuratorFramework c : cs) {
                try { c.close(); } catch (Throwable ignored) { }
            }
        }
    }

    private static void mixed(String connect, int k, String path, String goFifo, long holdUs) throws Exception {
        List<CuratorFramework> cs = new ArrayList<>(k);
        try {
            InterProcessMutex[] ms = new InterProcessMutex[k];
            for (int i = 0; i < k; i++) {
                CuratorFramework c = newClient(connect);
                cs.add(c);
                ms[i] = new InterProcessMutex(c, path);
                acquire(ms[i]);  // uncounted: loads and compiles the code path
                ms[i].release();
            }
            System.out.println("ready");
            System.out.flush();
            long end;
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(new FileInputStream(goFifo), StandardCharsets.US_ASCII))) {
                end = Long.parseLong(in.readLine().trim());
            }
            long[][] holds = new long[k][];
            int[] count = new int[k];
            AtomicReference<Throwable> err = new AtomicReference<>();
            Thread[] ts = new Thread[k];
            for (int i = 0; i < k; i++) {
                final int id = i;
                ts[i] = new Thread(() -> {
                    long[] mine = new long[1 << 16];
                    int n = 0;
                    try {
                        InterProcessMutex m = ms[id];
                        while (err.get() == null && System.nanoTime() < end) {
                            acquire(m);
                            long enter = System.nanoTime();
                            if (holdUs > 0) Thread.sleep(holdUs / 1000, (int) (holdUs % 1000) * 1000);
                            long leave = System.nanoTime();
                            m.release();
                            if (n + 2 > mine.length) mine = Arrays.copyOf(mine, mine.length * 2);
                            mine[n++] = enter;
                            mine[n++] = leave;
                        }
                    } catch (Throwable t) {
                        err.compareAndSet(null, t);
                    }
                    holds[id] = mine;
                    count[id] = n / 2;
                }, "mixed-" + i);
                ts[i].start();
            }
            for (Thread t : ts) t.join();
            if (err.get() != null) throw new Exception("worker failed", err.get());
            StringBuilder out = new StringBuilder();
            int total = 0;
            for (int i = 0; i < k; i++) {
                for (int j = 0; j < count[i]; j++)
                    out.append("s ").append(holds[i][2 * j]).append(' ').append(holds[i][2 * j + 1]).append('\n');
                total += count[i];
            }
            out.append("done ").append(total).append('\n');
            System.out.print(out);
            System.out.flush();
        } finally {
            for (CuratorFramework c : cs) {
                try { c.close(); } catch (Throwable ignored) { }
            }
        }
    }

    // Nearest-rank percentile over sorted nanosecond samples, in microseconds.
    private static double pct(long[] sorted, double q) {
        int idx = (int) Math.ceil(q * sorted.length) - 1;
        if (idx < 0) idx = 0;
        if (idx >= sorted.length) idx = sorted.length - 1;
        return sorted[idx] / 1000.0;
    }

    private static String result(String scenario, int clients, int ops, long[] latNs, long wallNs) {
        long[] s = latNs.clone();
        Arrays.sort(s);
        double sum = 0;
        for (long v : s) sum += v;
        double mean = s.length == 0 ? 0 : sum / s.length / 1000.0;
        double wallS = wallNs / 1e9;
        double opsPerS = wallS > 0 ? s.length / wallS : 0;
        return String.format(Locale.ROOT,
                "{\"backend\":\"curator\",\"scenario\":\"%s\",\"clients\":%d,\"ops\":%d,"
                        + "\"p50_us\":%.1f,\"p99_us\":%.1f,\"mean_us\":%.1f,"
                        + "\"ops_per_s\":%.1f,\"wall_s\":%.3f}",
                scenario, clients, ops, pct(s, 0.50), pct(s, 0.99), mean, opsPerS, wallS);
    }
}
