import java.util.concurrent.CyclicBarrier;

/**
 * Two transfers in opposite directions deadlock on two Account monitors: each holds the source
 * account in Bank.transfer and waits for the other in the synchronized Account.deposit.
 * A dump ends with "Found one Java-level deadlock:".
 */
public class MonitorDeadlock {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        Account checking = new Account("checking", 1_000);
        Account savings = new Account("savings", 5_000);
        // Both threads take their first lock before either tries the second: the deadlock is certain.
        Bank bank = new Bank(new CyclicBarrier(2));
        Scenario.startDaemon("transfer-a", () -> bank.transfer(checking, savings, 100));
        Scenario.startDaemon("transfer-b", () -> bank.transfer(savings, checking, 250));
        Scenario.awaitDeadlock(2, 30_000);
        Scenario.readyThenRunUntil(deadline);
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
            Scenario.await(bothLocked);
            to.deposit(amount);
        }
    }
}
