import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A quiet service that turns into a BLOCKED spike on cue: sixteen "pricing-worker-" threads sleep
 * (TIMED_WAITING, nothing BLOCKED) until the file named by args[1] exists; then one of them holds
 * the synchronized PriceCache and the other fifteen block on it at PriceCache.refresh. The alert
 * on BLOCKED threads against their own baseline needs exactly this shape: a calm history, then a
 * jump.
 * Usage: BlockedSpike SECONDS TRIGGER_FILE
 */
public class BlockedSpike {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        Path trigger = Path.of(args[1]);
        PriceCache cache = new PriceCache();
        List<Thread> workers = Scenario.startDaemons("pricing-worker-", 16, () -> work(trigger, cache));
        Scenario.awaitState(workers, Thread.State.TIMED_WAITING, 16, 30_000);
        Scenario.readyThenRunUntil(deadline);
    }

    static void work(Path trigger, PriceCache cache) {
        try {
            while (!Files.exists(trigger)) {
                Thread.sleep(100);
            }
            cache.refresh();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

class PriceCache {
    /** The first caller keeps the monitor for good; everyone after it is BLOCKED here. */
    synchronized void refresh() throws InterruptedException {
        Thread.sleep(Long.MAX_VALUE);
    }
}
