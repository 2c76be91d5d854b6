import java.util.List;

/**
 * Eight request threads contend for one synchronized Inventory. The holder sleeps inside
 * Inventory.recalculate(), so a dump shows one "- locked" holder and about seven BLOCKED
 * waiters with "- waiting to lock" at Inventory.reserve.
 */
public class MonitorContention {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        Inventory inventory = new Inventory();
        OrderController controller = new OrderController(inventory);
        List<Thread> workers = Scenario.startDaemons("http-nio-8080-exec-", 8, controller::serve);
        Scenario.awaitState(workers, Thread.State.BLOCKED, 6, 30_000);
        Scenario.readyThenRunUntil(deadline);
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
