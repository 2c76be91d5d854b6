import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Six workers borrow from a ConnectionPool guarded by a ReentrantLock; the holder keeps the
 * lock for ~300 ms while creating a connection (the Redis/Dubbo pool incident). Waiters park on
 * ReentrantLock$NonfairSync at ConnectionPool.borrow; with "jstack -l" the holder lists the
 * NonfairSync under "Locked ownable synchronizers".
 */
public class ReentrantLockPool {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        ConnectionPool pool = new ConnectionPool();
        OrderRepository repository = new OrderRepository(pool);
        List<Thread> workers = Scenario.startDaemons("pool-worker-", 6, repository::serve);
        Scenario.awaitState(workers, Thread.State.WAITING, 5, 30_000);
        Scenario.readyThenRunUntil(deadline);
    }
}

class OrderRepository {
    private final ConnectionPool pool;

    OrderRepository(ConnectionPool pool) {
        this.pool = pool;
    }

    void serve() {
        while (true) {
            findOrders();
        }
    }

    void findOrders() {
        PooledConnection c = pool.borrow();
        c.close();
    }
}

class PooledConnection {
    final long id;

    PooledConnection(long id) {
        this.id = id;
    }

    void close() {
    }
}

class ConnectionPool {
    private final ReentrantLock lock = new ReentrantLock();
    private long created;

    PooledConnection borrow() {
        lock.lock();
        try {
            // The pool is always exhausted, so every borrow creates a connection under the lock.
            return createConnection();
        } finally {
            lock.unlock();
        }
    }

    private PooledConnection createConnection() {
        // Stands in for a slow TCP connect + AUTH done while holding the pool lock.
        try {
            Thread.sleep(300);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return new PooledConnection(++created);
    }
}
