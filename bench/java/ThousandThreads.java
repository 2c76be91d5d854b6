import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A JVM shaped like a busy application server for dump benchmarks: N threads (default
 * 1000) with realistic stack depth, a third BLOCKED on a monitor, a third parked on a
 * ReentrantLock, the rest sleeping. Optional heap ballast (MiB) makes the -l heap walk
 * measurable. Optional "churning" threads keep changing their stack depth between dumps, as
 * request threads do, so a store of dumps cannot rely on every stack repeating. Prints READY
 * when all threads are in place.
 *
 * The stack depth of the N threads (default 12 calls below run()) can be set too: at 0 their
 * stacks are shallow and a dump is small, so a dump tool's own start-up shows.
 *
 *   java -Xss512k ThousandThreads [threads] [ballast-mib] [lifetime-s] [churning] [depth]
 */
public class ThousandThreads {
    static final Object MONITOR = new Object();
    static final ReentrantLock LOCK = new ReentrantLock();
    static Object[] ballast;

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int ballastMib = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        long lifetime = args.length > 2 ? Long.parseLong(args[2]) : 600;
        int churning = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        int depth = args.length > 4 ? Integer.parseInt(args[4]) : 12;
        ballast = allocate(ballastMib);
        List<Thread> started = new ArrayList<>();
        synchronized (MONITOR) {
            LOCK.lock();
            for (int i = 0; i < threads; i++) {
                int kind = i % 3;
                Thread t = new Thread(() -> recurse(depth, kind), "worker-" + i);
                t.setDaemon(true);
                t.start();
                started.add(t);
            }
            while (countWaiting(started) < threads) Thread.sleep(20);
            for (int i = 0; i < churning; i++) {
                Thread t = new Thread(ThousandThreads::churn, "churn-" + i);
                t.setDaemon(true);
                t.start();
            }
            System.out.println("READY");
            System.out.flush();
            Thread.sleep(lifetime * 1000L);
        }
    }

    // Many small objects: the -l heap walk's cost grows with the object count.
    static Object[] allocate(int mib) {
        Object[] objects = new Object[mib * 16 * 1024];
        for (int i = 0; i < objects.length; i++) objects[i] = new long[6];
        return objects;
    }

    static int countWaiting(List<Thread> threads) {
        int n = 0;
        for (Thread t : threads) {
            Thread.State s = t.getState();
            if (s == Thread.State.BLOCKED || s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING) n++;
        }
        return n;
    }

    // Sleeps at a random depth of one of two call chains, then climbs out and does it again.
    static void churn() {
        java.util.Random random = new java.util.Random();
        while (true) {
            int depth = 1 + random.nextInt(40);
            if (random.nextBoolean()) handleOrder(depth, random); else handleSearch(depth, random);
        }
    }

    static void handleOrder(int depth, java.util.Random random) {
        if (depth > 0) { handleOrder(depth - 1, random); return; }
        pause(random);
    }

    static void handleSearch(int depth, java.util.Random random) {
        if (depth > 0) { handleSearch(depth - 1, random); return; }
        pause(random);
    }

    static void pause(java.util.Random random) {
        try {
            Thread.sleep(1 + random.nextInt(20));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void recurse(int depth, int kind) {
        if (depth > 0) {
            recurse(depth - 1, kind);
            return;
        }
        try {
            if (kind == 0) {
                synchronized (MONITOR) { }
            } else if (kind == 1) {
                LOCK.lock();
            } else {
                Thread.sleep(Long.MAX_VALUE);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
