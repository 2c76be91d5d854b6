import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A chain of waits: four order threads take a ReentrantLock in StockBook.update and, holding
 * it, post to a synchronized AuditJournal; two auditor threads hold the journal's monitor for
 * 500 ms at a time. So the order threads park on ReentrantLock$NonfairSync at StockBook.update
 * behind a holder that is itself BLOCKED on AuditJournal at AuditJournal.append, whose holder
 * sleeps: the root of the chain is the journal.
 */
public class LockChain {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        AuditJournal journal = new AuditJournal();
        StockBook book = new StockBook(journal);
        List<Thread> auditors = Scenario.startDaemons("auditor-", 2, journal::audit);
        Scenario.awaitState(auditors, Thread.State.TIMED_WAITING, 1, 30_000);
        List<Thread> orders = Scenario.startDaemons("order-", 4, book::serve);
        Scenario.awaitState(orders, Thread.State.WAITING, 3, 30_000);
        Scenario.readyThenRunUntil(deadline);
    }
}

class StockBook {
    private final ReentrantLock lock = new ReentrantLock();
    private final AuditJournal journal;
    private long updates;

    StockBook(AuditJournal journal) {
        this.journal = journal;
    }

    void serve() {
        while (true) {
            update();
        }
    }

    void update() {
        lock.lock();
        try {
            updates++;
            journal.append(updates);
        } finally {
            lock.unlock();
        }
    }
}

class AuditJournal {
    private long entries;

    void audit() {
        while (true) {
            append(-1);
        }
    }

    synchronized void append(long entry) {
        entries++;
        if (entry < 0) {
            // An auditor's slow flush, done holding the journal's monitor.
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
