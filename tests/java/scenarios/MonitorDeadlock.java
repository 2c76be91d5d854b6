import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CyclicBarrier;

/**
 * Two transfers in opposite directions deadlock on two Account monitors: each holds the source
 * account in Bank.transfer and waits for the other in the synchronized Account.deposit.
 * A dump ends with "Found one Java-level deadlock:".
 */
public class MonitorDeadlock {
    public static void main(String[] args) throws Exception {
        long deadline = System.currentTimeMillis() + lifetimeSeconds(args) * 1000L;
        Account checking = new Account("checking", 1_000);
        Account savings = new Account("savings", 5_000);
        // Both threads take their first lock before either tries the second: the deadlock is certain.
        Bank bank = new Bank(new CyclicBarrier(2));
        Thread a = new Thread(() -> bank.transfer(checking, savings, 100), "transfer-a");
        Thread b = new Thread(() -> bank.transfer(savings, checking, 250), "transfer-b");
        a.setDaemon(true);
        b.setDaemon(true);
        a.start();
        b.start();
        awaitDeadlock(2, 30_000);
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Math.max(0, deadline - System.currentTimeMillis()));
        System.exit(0);
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
}

class Account {
    final String name;
    private long balance;

    Account(String name, long balance) {
        this.name = name;
        this.balance = balance;
    }

    synchronized void withdraw(long amount) {
        balance -= amount;
    }

    synchronized void deposit(long amount) {
        balance += amount;
    }
}

class Bank {
    private final CyclicBarrier bothLocked;

    Bank(CyclicBarrier bothLocked) {
        this.bothLocked = bothLocked;
    }

    void transfer(Account from, Account to, long amount) {
        synchronized (from) {
            from.withdraw(amount);
            awaitPeer();
            to.deposit(amount);
        }
    }

    private void awaitPeer() {
        try {
            bothLocked.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
