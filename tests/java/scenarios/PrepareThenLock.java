import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The hard case for inferring a ReentrantLock's owner without -l: six quote threads run code
 * of PriceBook.quote before lock() (prepare), under it (publish) and after unlock() (settle),
 * each a method quote calls, so at any moment several threads are inside the waiters' site
 * and only one of them owns the lock.
 */
public class PrepareThenLock {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        PriceBook book = new PriceBook();
        List<Thread> quoters = Scenario.startDaemons("quote-", 6, book::serve);
        Scenario.awaitState(quoters, Thread.State.WAITING, 2, 30_000, 1);
        Scenario.readyThenRunUntil(deadline);
    }
}

class PriceBook {
    private final ReentrantLock lock = new ReentrantLock();
    private long total;

    void serve() {
        long x = 1;
        while (true) {
            x = quote(x);
        }
    }

    long quote(long x) {
        long prepared = prepare(x);
        lock.lock();
        try {
            total += publish(prepared);
        } finally {
            lock.unlock();
        }
        return settle(prepared);
    }

    private static long spin(long x, long nanos) {
        long end = System.nanoTime() + nanos;
        long v = x;
        while (System.nanoTime() < end) {
            v = v * 31 + 7;
        }
        return v;
    }

    long prepare(long x) {
        return spin(x, 2_000_000);
    }

    long publish(long x) {
        return spin(x, 3_000_000);
    }

    long settle(long x) {
        return spin(x, 1_000_000);
    }
}
