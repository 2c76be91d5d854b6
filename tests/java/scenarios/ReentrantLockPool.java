import java.util.ArrayList;
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
        long deadline = System.currentTimeMillis() + lifetimeSeconds(args) * 1000L;
        ConnectionPool pool = new ConnectionPool();
        OrderRepository repository = new OrderRepository(pool);
        List<Thread> workers = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            Thread t = new Thread(repository::serve, "pool-worker-" + i);
            t.setDaemon(true);
            workers.add(t);
            t.start();
        }
        awaitState(workers, Thread.State.WAITING, 5, 30_000);
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
        System.err.println("contention not established: fewer than " + atLeast + " threads " + state);
        System.exit(2);
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
