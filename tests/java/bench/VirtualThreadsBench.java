import java.io.FileWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The JVM of scripts/bench-vthreads.sh: PLATFORM platform and VIRTUAL virtual threads, some of
 * each contending, and a probe thread that measures the application's stalls.
 *
 *   java VirtualThreadsBench PLATFORM VIRTUAL SECONDS STALL_FILE
 *
 * - platform threads: a third BLOCKED on 10 monitors whose holders sleep inside them, a third
 *   parked on 10 ReentrantLocks the same way, a third sleeping; stacks 15+ frames deep;
 * - virtual threads: a tenth BLOCKED on 20 monitors, a tenth parked on 20 ReentrantLocks, the
 *   rest sleeping 50-500 ms at a time (unmounted), stacks 10+ frames deep;
 * - the probe (a platform thread) sleeps 1 ms in a loop; each oversleep beyond 1 ms longer than
 *   0.2 ms is appended to STALL_FILE as "epoch_nanos_at_wakeup stall_nanos": the worst stall
 *   during a dump is the largest stall whose wake-up falls in the dump's time window.
 * Prints READY once every thread has started.
 */
public class VirtualThreadsBench {
    static final Object[] platformMonitors = new Object[10];
    static final ReentrantLock[] platformLocks = new ReentrantLock[10];
    static final Object[] virtualMonitors = new Object[20];
    static final ReentrantLock[] virtualLocks = new ReentrantLock[20];

    public static void main(String[] args) throws Exception {
        int platform = Integer.parseInt(args[0]);
        int virtual = Integer.parseInt(args[1]);
        long seconds = Long.parseLong(args[2]);
        String stallFile = args[3];
        for (int i = 0; i < 10; i++) {
            platformMonitors[i] = new Object();
            platformLocks[i] = new ReentrantLock();
        }
        for (int i = 0; i < 20; i++) {
            virtualMonitors[i] = new Object();
            virtualLocks[i] = new ReentrantLock();
        }
        Thread probe = new Thread(() -> probe(stallFile), "stall-probe");
        probe.setDaemon(true);
        probe.setPriority(Thread.MAX_PRIORITY);
        probe.start();
        for (int i = 0; i < platform; i++) {
            final int n = i;
            Thread t = new Thread(() -> deep(15, () -> platformWork(n)), "platform-worker-" + i);
            t.setDaemon(true);
            t.start();
        }
        for (int i = 0; i < virtual; i++) {
            final int n = i;
            Thread.ofVirtual().start(() -> deep(10, () -> virtualWork(n)));
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(seconds * 1000);
        System.exit(0);
    }

    static void platformWork(int n) {
        switch (n % 3) {
            case 0 -> { while (true) { synchronized (platformMonitors[n % 10]) { sleep(200); } } }
            case 1 -> { while (true) { lockAndSleep(platformLocks[n % 10], 200); } }
            default -> { while (true) { sleep(1000); } }
        }
    }

    static void virtualWork(int n) {
        switch (n % 10) {
            case 0 -> { while (true) { synchronized (virtualMonitors[n % 20]) { sleep(100); } } }
            case 1 -> { while (true) { lockAndSleep(virtualLocks[n % 20], 100); } }
            default -> { while (true) { sleep(50 + (n * 37L) % 450); } }
        }
    }

    static void lockAndSleep(ReentrantLock lock, long ms) {
        lock.lock();
        try {
            sleep(ms);
        } finally {
            lock.unlock();
        }
    }

    // Recursion gives every stack the depth of a framework's call chain.
    static void deep(int depth, Runnable work) {
        if (depth == 0) {
            work.run();
        } else {
            deep(depth - 1, work);
        }
    }

    static void probe(String stallFile) {
        try (PrintWriter out = new PrintWriter(new FileWriter(stallFile), true)) {
            while (true) {
                long before = System.nanoTime();
                Thread.sleep(1);
                long stall = System.nanoTime() - before - 1_000_000L;
                if (stall > 200_000L) {
                    Instant now = Instant.now();
                    out.println((now.getEpochSecond() * 1_000_000_000L + now.getNano()) + " " + stall);
                }
            }
        } catch (IOException | InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
