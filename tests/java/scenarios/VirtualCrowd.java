import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A crowd of virtual threads (JDK 21+; the count is the second argument, default 10 000): half
 * BLOCKED on the CrowdLedger monitor at CrowdLedger.post, half parked on a ReentrantLock at
 * CrowdJournal.append, both held forever by a sleeping virtual owner. On JDK 24+ every waiter is
 * unmounted, so Thread.print shows none of them and the JSON dump shows them all.
 */
public class VirtualCrowd {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        int count = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;

        CrowdLedger ledger = new CrowdLedger();
        CrowdJournal journal = new CrowdJournal();
        Thread ledgerOwner = Thread.ofVirtual().name("ledger-owner-vt").start(ledger::hold);
        Thread journalOwner = Thread.ofVirtual().name("journal-owner-vt").start(journal::hold);
        Scenario.awaitState(List.of(ledgerOwner, journalOwner), Thread.State.TIMED_WAITING, 2, 30_000);

        List<Thread> ledgerWaiters = new ArrayList<>();
        List<Thread> journalWaiters = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            if (i % 2 == 0) ledgerWaiters.add(Thread.ofVirtual().name("ledger-vt-" + i).start(ledger::post));
            else journalWaiters.add(Thread.ofVirtual().name("journal-vt-" + i).start(journal::append));
        }
        Scenario.awaitState(ledgerWaiters, Thread.State.BLOCKED, ledgerWaiters.size(), 60_000, 100);
        Scenario.awaitState(journalWaiters, Thread.State.WAITING, journalWaiters.size(), 60_000, 100);
        Scenario.readyThenRunUntil(deadline);
    }

    static void sleepForever() {
        while (true) {
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }
}

class CrowdLedger {
    synchronized void hold() {
        VirtualCrowd.sleepForever();
    }

    synchronized void post() {
    }
}

class CrowdJournal {
    private final ReentrantLock lock = new ReentrantLock();

    void hold() {
        lock.lock();
        try {
            VirtualCrowd.sleepForever();
        } finally {
            lock.unlock();
        }
    }

    void append() {
        lock.lock();
        lock.unlock();
    }
}
