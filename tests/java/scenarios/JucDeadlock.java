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
        long deadline = Scenario.deadline(args);

        Ledger receivables = new Ledger("receivables", new CyclicBarrier(2));
        Ledger payables = new Ledger("payables", receivables.bothLocked);
        Scenario.startDaemon("ledger-post-1", () -> receivables.post(payables, 100));
        Scenario.startDaemon("ledger-post-2", () -> payables.post(receivables, 250));

        CyclicBarrier settlementBarrier = new CyclicBarrier(2);
        Journal journal = new Journal(settlementBarrier);
        SettlementBatch batch = new SettlementBatch(journal, settlementBarrier);
        journal.batch = batch;
        Scenario.startDaemon("settlement-a", batch::close);
        Scenario.startDaemon("settlement-b", journal::rollover);

        Scenario.awaitDeadlock(4, 30_000);
        Scenario.readyThenRunUntil(deadline);
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
            Scenario.await(bothLocked);
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
        Scenario.await(bothLocked);
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
            Scenario.await(bothLocked);
            batch.markRolled();
            entries = 0;
        } finally {
            lock.unlock();
        }
    }
}
