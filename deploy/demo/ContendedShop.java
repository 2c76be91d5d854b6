import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A small "shop" with lock contention for demonstrating lockwatch.
 *
 * Request threads "http-nio-8080-exec-N" serve two kinds of requests:
 * - catalog pages read prices through PriceCache, whose synchronized refresh() is slow now and
 *   then (hold times from ~0.5 ms to ~150 ms), so other threads queue BLOCKED on the PriceCache
 *   monitor at PriceCache.refresh;
 * - checkouts borrow a database connection from ConnectionPool, guarded by a ReentrantLock that
 *   is held while a stale connection is replaced, so threads park on ReentrantLock$NonfairSync at
 *   ConnectionPool.borrow.
 *
 * Run:   java ContendedShop.java [threads] [lifetime-seconds]
 * (defaults: 12 threads, run until killed). Prints READY once the request threads are running.
 */
public class ContendedShop {
    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 12;
        long lifetimeSeconds = args.length > 1 ? Long.parseLong(args[1]) : 0;

        PriceCache prices = new PriceCache();
        ConnectionPool pool = new ConnectionPool(8);
        CatalogController catalog = new CatalogController(prices);
        CheckoutController checkout = new CheckoutController(pool, prices);
        for (int i = 1; i <= threads; i++) {
            Thread t = new Thread(new RequestLoop(catalog, checkout), "http-nio-8080-exec-" + i);
            t.setDaemon(true);
            t.start();
        }
        System.out.println("READY");
        System.out.flush();
        if (lifetimeSeconds > 0) {
            Thread.sleep(lifetimeSeconds * 1000L);
            System.exit(0);
        }
        while (true) {
            Thread.sleep(60_000);
        }
    }
}

class RequestLoop implements Runnable {
    private final CatalogController catalog;
    private final CheckoutController checkout;

    RequestLoop(CatalogController catalog, CheckoutController checkout) {
        this.catalog = catalog;
        this.checkout = checkout;
    }

    @Override
    public void run() {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        while (true) {
            if (rnd.nextInt(100) < 65) {
                catalog.listProducts(rnd.nextInt(20));
            } else {
                checkout.placeOrder(rnd.nextInt(20));
            }
            // Client think time keeps the demo cheap on CPU.
            try { Thread.sleep(ThreadLocalRandom.current().nextLong(5, 40 + 1)); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
        }
    }
}

class CatalogController {
    private final PriceCache prices;

    CatalogController(PriceCache prices) {
        this.prices = prices;
    }

    long listProducts(int category) {
        return prices.priceOf(category);
    }
}

class CheckoutController {
    private final ConnectionPool pool;
    private final PriceCache prices;

    CheckoutController(ConnectionPool pool, PriceCache prices) {
        this.pool = pool;
        this.prices = prices;
    }

    void placeOrder(int product) {
        long price = prices.priceOf(product);
        DbConnection c = pool.borrow();
        try {
            c.insertOrder(product, price);
        } finally {
            pool.giveBack(c);
        }
    }
}

class PriceCache {
    private final long[] prices = new long[20];
    private long loadedAt;

    long priceOf(int product) {
        refresh();
        return prices[product];
    }

    synchronized void refresh() {
        long now = System.nanoTime();
        int roll = ThreadLocalRandom.current().nextInt(100);
        // Every caller re-checks freshness under the lock; most holds are short, a few reload
        // from the "price service" and are long -- the mix that makes a monitor hot.
        if (roll < 1 || now - loadedAt > 2_000_000_000L) {
            reloadFromPriceService();
            loadedAt = System.nanoTime();
        } else if (roll < 30) {
            LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(500, 5_001) * 1000L);
        }
    }

    private void reloadFromPriceService() {
        try { Thread.sleep(ThreadLocalRandom.current().nextLong(40, 150 + 1)); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
        for (int i = 0; i < prices.length; i++) {
            prices[i] = 100 + i;
        }
    }
}

class DbConnection {
    final long id;

    DbConnection(long id) {
        this.id = id;
    }

    void insertOrder(int product, long price) {
        try { Thread.sleep(ThreadLocalRandom.current().nextLong(5, 25 + 1)); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
    }
}

class ConnectionPool {
    private final ReentrantLock lock = new ReentrantLock();
    private final Deque<DbConnection> idle = new ArrayDeque<>();
    private long created;

    ConnectionPool(int size) {
        for (int i = 0; i < size; i++) {
            idle.add(new DbConnection(++created));
        }
    }

    DbConnection borrow() {
        lock.lock();
        try {
            DbConnection c = idle.poll();
            // Empty pool or a connection that failed validation: reconnect while holding the lock.
            if (c == null || ThreadLocalRandom.current().nextInt(100) < 5) {
                c = createConnection();
            }
            return c;
        } finally {
            lock.unlock();
        }
    }

    void giveBack(DbConnection c) {
        lock.lock();
        try {
            if (idle.size() < 8) {
                idle.add(c);
            }
        } finally {
            lock.unlock();
        }
    }

    private DbConnection createConnection() {
        try { Thread.sleep(ThreadLocalRandom.current().nextLong(30, 90 + 1)); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
        return new DbConnection(++created);
    }
}
