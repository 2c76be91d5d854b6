import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Five startup tasks wait in Startup.awaitDatabase() on a CountDownLatch that is never counted
 * down (the database never came up). A dump shows them WAITING (parking) on
 * CountDownLatch$Sync, which no thread owns -- waiting, not lock contention.
 */
public class LatchWait {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        Startup startup = new Startup();
        List<Thread> waiters = Scenario.startDaemons("db-init-waiter-", 5, new WarmupTask(startup));
        Scenario.awaitState(waiters, Thread.State.WAITING, 5, 30_000);
        Scenario.readyThenRunUntil(deadline);
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
