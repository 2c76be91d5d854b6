import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Five startup tasks wait in Startup.awaitDatabase() on a CountDownLatch that is never counted
 * down (the database never came up). A dump shows them WAITING (parking) on
 * CountDownLatch$Sync, which no thread owns -- waiting, not lock contention.
 */
public class LatchWait {
    public static void main(String[] args) throws Exception {
        long deadline = System.currentTimeMillis() + lifetimeSeconds(args) * 1000L;
        Startup startup = new Startup();
        List<Thread> waiters = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            Thread t = new Thread(new WarmupTask(startup), "db-init-waiter-" + i);
            t.setDaemon(true);
            waiters.add(t);
            t.start();
        }
        awaitState(waiters, Thread.State.WAITING, 5, 30_000);
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Math.max(0, deadline - System.currentTimeMillis()));
        System.exit(0);
    }

    static long lifetimeSeconds(String[] args) {
        return args.length > 0 ? Long.parseLong(args[0]) : 120;
    }

    /** Polls until at least {@code atLeast} threads are in {@code state}; exits the JVM on timeout. */
    static void awaitState(List<Thread> threads, Thread.State state, int atLeast, long timeoutMs)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline) {
            int n = 0;
            for (Thread t : threads) {
                if (t.getState() == state) n++;
            }
            if (n >= atLeast) return;
            Thread.sleep(10);
        }
        System.err.println("wait not established: fewer than " + atLeast + " threads " + state);
        System.exit(2);
    }
}

class Startup {
    private final CountDownLatch databaseReady = new CountDownLatch(1);

    void awaitDatabase() throws InterruptedException {
        databaseReady.await();
    }
}

class WarmupTask implements Runnable {
    private final Startup startup;

    WarmupTask(Startup startup) {
        this.startup = startup;
    }

    @Override
    public void run() {
        try {
            startup.awaitDatabase();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
