import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Two deadlocks the JVM reports:
 * - ledger-post-1 / ledger-post-2 on two ReentrantLocks: each holds its own ledger in
 *   Ledger.post and parks in the counterpart's Ledger.applyEntry;
 * - settlement-a / settlement-b, mixed: settlement-a holds the SettlementBatch monitor
 *   (SettlementBatch.close) and parks for the Journal's ReentrantLock (Journal.append);
 *   settlement-b holds that lock (Journal.rollover) and blocks on the monitor
 *   (SettlementBatch.markRolled).
 * A dump ends with "Found 2 deadlocks.".
 */
public class JucDeadlock {
    public static void main(String[] args) throws Exception {
        long deadline = System.currentTimeMillis() + lifetimeSeconds(args) * 1000L;

        Ledger receivables = new Ledger("receivables", new CyclicBarrier(2));
        Ledger payables = new Ledger("payables", receivables.bothLocked);
        start("ledger-post-1", () -> receivables.post(payables, 100));
        start("ledger-post-2", () -> payables.post(receivables, 250));

        CyclicBarrier settlementBarrier = new CyclicBarrier(2);
        Journal journal = new Journal(settlementBarrier);
        SettlementBatch batch = new SettlementBatch(journal, settlementBarrier);
        journal.batch = batch;
        start("settlement-a", batch::close);
        start("settlement-b", journal::rollover);

        awaitDeadlock(4, 30_000);
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Math.max(0, deadline - System.currentTimeMillis()));
        System.exit(0);
    }

    static void start(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
    }

    static long lifetimeSeconds(String[] args) {
        return args.length > 0 ? Long.parseLong(args[0]) : 120;
    }

    /** Polls the JVM's own deadlock detector until {@code threads} threads are deadlocked. */
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

    static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}

class Ledger {
    final String name;
    final CyclicBarrier bothLocked;
    private final ReentrantLock lock = new ReentrantLock();
    private long balance;

    Ledger(String name, CyclicBarrier bothLocked) {
        this.name = name;
        this.bothLocked = bothLocked;
    }

    void post(Ledger counterpart, long amount) {
        lock.lock();
        try {
            balance -= amount;
            // Both posters hold their own ledger before touching the other one.
            JucDeadlock.await(bothLocked);
            counterpart.applyEntry(amount);
        } finally {
            lock.unlock();
        }
    }

    void applyEntry(long amount) {
        lock.lock();
        try {
            balance += amount;
        } finally {
            lock.unlock();
        }
    }
}

class SettlementBatch {
    private final Journal journal;
    private final CyclicBarrier bothLocked;
    private boolean rolled;

    SettlementBatch(Journal journal, CyclicBarrier bothLocked) {
        this.journal = journal;
        this.bothLocked = bothLocked;
    }

    synchronized void close() {
        JucDeadlock.await(bothLocked);
        journal.append("batch closed");
    }

    synchronized void markRolled() {
        rolled = true;
    }
}

class Journal {
    private final ReentrantLock lock = new ReentrantLock();
    private final CyclicBarrier bothLocked;
    SettlementBatch batch;
    private int entries;

    Journal(CyclicBarrier bothLocked) {
        this.bothLocked = bothLocked;
    }

    void append(String entry) {
        lock.lock();
        try {
            entries++;
        } finally {
            lock.unlock();
        }
    }

    void rollover() {
        lock.lock();
        try {
            JucDeadlock.await(bothLocked);
            batch.markRolled();
            entries = 0;
        } finally {
            lock.unlock();
        }
    }
}
