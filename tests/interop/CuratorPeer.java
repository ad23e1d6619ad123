// An Apache Curator client for zklock's interop tests
// (tests/integration/test_interop_curator.cpp, driven by curator_peer.hpp).
//
// One Curator session on one lock path; the test tells it what to do, one
// command a line, on stdin (or on the file given with --commands, e.g. a FIFO),
// and it reports on stdout, one line per event, flushed, with System.nanoTime()
// (CLOCK_MONOTONIC on Linux: the clock the C++ test reads too):
//
//   commands                      reports
//   mutex ID     InterProcessMutex           predecessor ID NODE  it listed the queue and waits for NODE
//                                                                 ("-": for nobody); each time it decides
//                                            acquired ID T NODE   the lock is held from T on
//   read ID      InterProcessReadWriteLock   acquired ID T NODE   (its read side)
//   write ID     InterProcessReadWriteLock   acquired ID T NODE   (its write side)
//   selector ID  LeaderSelector (id ID)      leader ID T          takeLeadership() started at T
//   latch ID     LeaderLatch (id ID)         leader ID T NODE     isLeader() at T
//   semaphore ID InterProcessSemaphoreV2     acquired ID T NODE   a lease (of 2) is held from T on
//                                            not-leader ID T      notLeader() at T
//   churn ID N   InterProcessMutex, taken    acquired ID T NODE   each time it is held, then it lists the
//                and released N times                             path (a server round trip while holding)
//                                            releasing ID T       and releases
//                                            churned ID N         all N done
//   revocable ID InterProcessMutex made       (as mutex)           makeRevocable() before its acquire; when
//                revocable                   revocation-requested ID T   the listener is called (at T) it
//                                                                 releases, as `release ID` does
//   revoke ID NODE  Revoker.attemptRevoke    revoke-sent ID T     the request was written (NODE: a full path)
//   release ID   ends what ID holds          releasing ID T       held until T (then released)
//                                            released ID T        release() / close() returned (a
//                                                                 selector: closed once takeLeadership
//                                                                 returned; its lock goes after that)
//   quit         closes the session and exits with status 0       done peer COUNT
//
//   ready peer T        connected, before the first command
//   watching peer NODE  a recipe read NODE (a child of the path) with a data
//                       watch: some contender decided to wait for NODE. Every
//                       recipe waits so (InterProcessMutex, the read-write
//                       lock's sides, LeaderLatch), hence "peer", not an ID
//   error ID TEXT       a command failed (exit status stays 0; the test reads it)
//
// Each lock and selector runs on a thread of its own (Curator releases a lock
// on the thread that took it). Each command makes a new recipe object, so two
// IDs are two contenders. Configured by argv only; it takes no credentials.

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.drivers.AdvancedTracerDriver;
import org.apache.curator.drivers.EventTrace;
import org.apache.curator.drivers.OperationTrace;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.PredicateResults;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.retry.RetryOneTime;

public final class CuratorPeer {
    private static final long ACQUIRE_TIMEOUT_S = 60;

    private final CuratorFramework client;
    private final String path;
    // What `release ID` does for each ID that holds (or waits for) something.
    private final Map<String, Runnable> releases = new ConcurrentHashMap<>();
    private final AtomicInteger count = new AtomicInteger();

    private CuratorPeer(CuratorFramework client, String path) {
        this.client = client;
        this.path = path;
    }

    static synchronized void emit(String... words) {
        System.out.println(String.join(" ", words));
        System.out.flush();
    }

    static String now() {
        return Long.toString(System.nanoTime());
    }

    // InterProcessMutex exposes the node it holds only to subclasses
    // (getLockPath(), protected); the read-write lock's sides are private
    // subclasses, so it is read by reflection, for the report only.
    static String heldNode(InterProcessMutex m) {
        try {
            Method get = InterProcessMutex.class.getDeclaredMethod("getLockPath");
            get.setAccessible(true);
            Object p = get.invoke(m);
            return p == null ? "-" : p.toString();
        } catch (ReflectiveOperationException e) {
            return "-";
        }
    }

    static String word(Throwable e) {
        return e.toString().replaceAll("\\s+", "_");
    }

    // InterProcessMutex's own driver, reporting each queue decision (the test
    // waits for it instead of guessing when Curator has looked at the queue).
    private static StandardLockInternalsDriver traced(String id) {
        return new StandardLockInternalsDriver() {
            @Override
            public PredicateResults getsTheLock(CuratorFramework c, List<String> children, String node, int maxLeases)
                    throws Exception {
                PredicateResults r = super.getsTheLock(c, children, node, maxLeases);
                emit("predecessor", id, r.getsTheLock() ? "-" : r.getPathToWatch());
                return r;
            }
        };
    }

    // Reports each data watch a recipe sets on a child of `path` once the server
    // answered the read: the decision to wait, for recipes without a driver to
    // wrap (the read-write lock's sides, LeaderLatch).
    private static AdvancedTracerDriver watches(String path) {
        return new AdvancedTracerDriver() {
            @Override
            public void addTrace(OperationTrace t) {
                String p = t.getPath();
                if (t.getName().startsWith("GetDataBuilderImpl") && t.isWithWatcher() && t.getReturnCode() == 0
                        && p != null && p.startsWith(path + "/"))
                    emit("watching", "peer", p.substring(path.length() + 1));
            }

            @Override
            public void addEvent(EventTrace t) {}
        };
    }

    private void lock(String id, InterProcessMutex m) {
        CountDownLatch release = new CountDownLatch(1);
        releases.put(id, release::countDown);
        Thread t = new Thread(() -> {
            try {
                if (!m.acquire(ACQUIRE_TIMEOUT_S, TimeUnit.SECONDS)) {
                    emit("error", id, "no_lock_within_" + ACQUIRE_TIMEOUT_S + "_s");
                    return;
                }
                emit("acquired", id, now(), heldNode(m));
                release.await();
                emit("releasing", id, now());
                m.release();
                count.incrementAndGet();
                emit("released", id, now());
            } catch (Exception e) {
                emit("error", id, word(e));
            }
        }, "lock-" + id);
        t.setDaemon(true);
        t.start();
    }

    // InterProcessMutex with makeRevocable(): the listener releases the lock on
    // the thread that took it (Curator releases only there), as `release ID` does.
    private void revocable(String id) {
        InterProcessMutex m = new InterProcessMutex(client, path, traced(id));
        m.makeRevocable(lock -> {
            emit("revocation-requested", id, now());
            Runnable r = releases.remove(id);
            if (r != null) r.run();
        });
        lock(id, m);
    }

    private void revoke(String id, String node) {
        try {
            Revoker.attemptRevoke(client, node);
            emit("revoke-sent", id, now());
        } catch (Exception e) {
            emit("error", id, word(e));
        }
    }

    private void churn(String id, int n) {
        InterProcessMutex m = new InterProcessMutex(client, path);
        Thread t = new Thread(() -> {
            try {
                for (int i = 0; i < n; ++i) {
                    if (!m.acquire(ACQUIRE_TIMEOUT_S, TimeUnit.SECONDS)) {
                        emit("error", id, "no_lock_within_" + ACQUIRE_TIMEOUT_S + "_s");
                        return;
                    }
                    emit("acquired", id, now(), heldNode(m));
                    client.getChildren().forPath(path);
                    emit("releasing", id, now());
                    m.release();
                    count.incrementAndGet();
                }
                emit("churned", id, Integer.toString(n));
            } catch (Exception e) {
                emit("error", id, word(e));
            }
        }, "churn-" + id);
        t.setDaemon(true);
        t.start();
    }

    // InterProcessSemaphoreV2 with 2 leases: its leases/ and locks/ children under the path.
    private void semaphore(String id) {
        CountDownLatch release = new CountDownLatch(1);
        releases.put(id, release::countDown);
        InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(client, path, 2);
        Thread t = new Thread(() -> {
            try {
                Lease lease = sem.acquire(ACQUIRE_TIMEOUT_S, TimeUnit.SECONDS);
                if (lease == null) {
                    emit("error", id, "no_lease_within_" + ACQUIRE_TIMEOUT_S + "_s");
                    return;
                }
                emit("acquired", id, now(), lease.getNodeName());
                release.await();
                emit("releasing", id, now());
                sem.returnLease(lease);
                count.incrementAndGet();
                emit("released", id, now());
            } catch (Exception e) {
                emit("error", id, word(e));
            }
        }, "semaphore-" + id);
        t.setDaemon(true);
        t.start();
    }

    private void selector(String id) {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch returned = new CountDownLatch(1);
        AtomicBoolean led = new AtomicBoolean();
        LeaderSelector s = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
            @Override
            public void takeLeadership(CuratorFramework c) throws Exception {
                led.set(true);
                try {
                    emit("leader", id, now());
                    release.await();
                    emit("releasing", id, now());
                } finally {
                    returned.countDown();  // LeaderSelector releases its lock after this returns
                }
            }
        });
        s.setId(id);
        releases.put(id, () -> {
            release.countDown();
            try {
                if (led.get()) returned.await();  // close() would interrupt takeLeadership
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            s.close();  // gives up its place in line if it never led; never requeues
            count.incrementAndGet();
            emit("released", id, now());
        });
        s.start();
    }

    private void latch(String id) throws Exception {
        LeaderLatch l = new LeaderLatch(client, path, id);
        l.addListener(new LeaderLatchListener() {
            @Override
            public void isLeader() {
                emit("leader", id, now(), l.getOurPath());
            }

            @Override
            public void notLeader() {
                emit("not-leader", id, now());
            }
        });
        releases.put(id, () -> {
            emit("releasing", id, now());
            try {
                l.close();  // deletes its node
            } catch (Exception e) {
                emit("error", id, word(e));
                return;
            }
            count.incrementAndGet();
            emit("released", id, now());
        });
        l.start();
    }

    private void run(BufferedReader in) throws Exception {
        for (String line; (line = in.readLine()) != null;) {
            String[] w = line.trim().split("\\s+");
            if (w.length == 1 && w[0].equals("quit")) return;
            if (w.length == 3 && w[0].equals("churn")) {
                churn(w[1], Integer.parseInt(w[2]));
                continue;
            }
            if (w.length == 3 && w[0].equals("revoke")) {
                revoke(w[1], w[2]);
                continue;
            }
            if (w.length != 2) {
                emit("error", "-", "bad_command:" + line.replace(' ', '_'));
                continue;
            }
            String id = w[1];
            try {
                switch (w[0]) {
                    case "mutex": lock(id, new InterProcessMutex(client, path, traced(id))); break;
                    case "revocable": revocable(id); break;
                    case "read": lock(id, new InterProcessReadWriteLock(client, path).readLock()); break;
                    case "write": lock(id, new InterProcessReadWriteLock(client, path).writeLock()); break;
                    case "selector": selector(id); break;
                    case "latch": latch(id); break;
                    case "semaphore": semaphore(id); break;
                    case "release": {
                        Runnable r = releases.remove(id);
                        if (r == null) emit("error", id, "holds_nothing");
                        else r.run();
                        break;
                    }
                    default: emit("error", id, "unknown_command:" + w[0]);
                }
            } catch (Exception e) {
                emit("error", id, word(e));
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String connect = null, path = null, commands = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--connect": connect = args[i + 1]; break;
                case "--path": path = args[i + 1]; break;
                case "--commands": commands = args[i + 1]; break;
                default: System.err.println("CuratorPeer: unknown option " + args[i]); System.exit(2);
            }
        }
        if (connect == null || path == null) {
            System.err.println("usage: CuratorPeer --connect HOST:PORT --path /lock/path [--commands FILE]");
            System.exit(2);
        }
        // The test server allows sessions of 4 s at most.
        CuratorFramework client = CuratorFrameworkFactory.newClient(connect, 4000, 15000, new RetryOneTime(500));
        client.getZookeeperClient().setTracerDriver(watches(path));
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            System.err.println("CuratorPeer: not connected to " + connect + " within 30 s");
            System.exit(1);
        }
        CuratorPeer peer = new CuratorPeer(client, path);
        emit("ready", "peer", now());
        InputStream source = commands == null ? System.in : new FileInputStream(commands);
        try (BufferedReader in = new BufferedReader(new InputStreamReader(source, StandardCharsets.UTF_8))) {
            peer.run(in);
        } finally {
            client.close();  // ends the session: whatever it still holds or waits for is gone
        }
        emit("done", "peer", Integer.toString(peer.count.get()));
        System.exit(0);
    }
}
