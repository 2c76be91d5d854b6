import java.util.ArrayList;
import java.util.List;

/**
 * Eight request threads contend for one synchronized Inventory. The holder sleeps inside
 * Inventory.recalculate(), so a dump shows one "- locked" holder and about seven BLOCKED
 * waiters with "- waiting to lock" at Inventory.reserve.
 */
public class MonitorContention {
    public static void main(String[] args) throws Exception {
        long deadline = System.currentTimeMillis() + lifetimeSeconds(args) * 1000L;
        Inventory inventory = new Inventory();
        OrderController controller = new OrderController(inventory);
        List<Thread> workers = new ArrayList<>();
        for (int i = 1; i <= 8; i++) {
            Thread t = new Thread(controller::serve, "http-nio-8080-exec-" + i);
            t.setDaemon(true);
            workers.add(t);
            t.start();
        }
        awaitState(workers, Thread.State.BLOCKED, 6, 30_000);
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

class OrderController {
    private final Inventory inventory;

    OrderController(Inventory inventory) {
        this.inventory = inventory;
    }

    void serve() {
        long sku = 0;
        while (true) {
            placeOrder(sku++ % 97);
        }
    }

    void placeOrder(long sku) {
        inventory.reserve(sku, 1);
    }
}

class Inventory {
    private final long[] stock = new long[97];

    synchronized boolean reserve(long sku, int quantity) {
        recalculate();
        stock[(int) sku] -= quantity;
        return true;
    }

    private void recalculate() {
        // Stands in for a slow stock recomputation done while holding the lock.
        try {
            Thread.sleep(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
