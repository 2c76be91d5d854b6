import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

/**
 * Scaffolding shared by the scenario programs: lifetime, starting threads, waiting until the
 * scenario's state is established, and the READY handshake. Compiles with --release 17.
 */
final class Scenario {
    private Scenario() {
    }

    /** When the program exits: now plus the lifetime in seconds from args[0] (default 120). */
    static long deadline(String[] args) {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 120;
        return System.currentTimeMillis() + seconds * 1000L;
    }

    /** Starts a daemon thread, so a scenario never outlives its deadline. */
    static Thread startDaemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Starts daemon threads {@code namePrefix}1..{@code count}, all running {@code body}. */
    static List<Thread> startDaemons(String namePrefix, int count, Runnable body) {
        List<Thread> threads = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            threads.add(startDaemon(namePrefix + i, body));
        }
        return threads;
    }

    /** Polls every 10 ms until {@code atLeast} threads are in {@code state}; exits 2 on timeout. */
    static void awaitState(List<Thread> threads, Thread.State state, int atLeast, long timeoutMs)
            throws InterruptedException {
        awaitState(threads, state, atLeast, timeoutMs, 10);
    }

    /** Samples every {@code pollMs} ms until {@code atLeast} threads are in {@code state} at once. */
    static void awaitState(List<Thread> threads, Thread.State state, int atLeast, long timeoutMs,
            long pollMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline) {
            int n = 0;
            for (Thread t : threads) {
                if (t.getState() == state) n++;
            }
            if (n >= atLeast) return;
            Thread.sleep(pollMs);
        }
        System.err.println("state not established: fewer than " + atLeast + " threads " + state);
        System.exit(2);
    }

    /** Waits until the JVM's deadlock detector reports {@code threads} threads; exits 2 on timeout. */
    static void awaitDeadlock(int threads, long timeoutMs) throws InterruptedException {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline) {
            long[] ids = mx.findDeadlockedThreads();
            if (ids != null && ids.length >= threads) return;
            Thread.sleep(10);
        }
        System.err.println("deadlock not established");
        System.exit(2);
    }

    /** Waits at {@code barrier}; a broken barrier means a broken scenario, so it fails unchecked. */
    static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Prints READY, then keeps the JVM (and so the established state) alive until {@code deadline}. */
    static void readyThenRunUntil(long deadline) throws InterruptedException {
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Math.max(0, deadline - System.currentTimeMillis()));
        System.exit(0);
    }

    /**
     * The number of live threads whose name starts with {@code namePrefix}, whose state is
     * {@code state} and whose stack has a frame {@code frame} ("package.Class.method"). For
     * threads a library starts (Tomcat, Netty), and for states only the stack tells apart
     * (parked on this lock rather than another).
     */
    static int countThreads(String namePrefix, Thread.State state, String frame) {
        int n = 0;
        for (java.util.Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            Thread t = e.getKey();
            if (!t.getName().startsWith(namePrefix) || t.getState() != state) continue;
            for (StackTraceElement f : e.getValue()) {
                if (frame.equals(f.getClassName() + "." + f.getMethodName())) {
                    n++;
                    break;
                }
            }
        }
        return n;
    }

    /** Polls every 20 ms until {@code established} holds; prints {@code what} and exits 2 on timeout. */
    static void awaitCondition(java.util.function.BooleanSupplier established, long timeoutMs, String what)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline) {
            if (established.getAsBoolean()) return;
            Thread.sleep(20);
        }
        System.err.println("state not established: " + what);
        System.exit(2);
    }
}
