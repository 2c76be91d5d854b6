import java.time.Duration;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.pool2.BasePooledObjectFactory;
import org.apache.commons.pool2.PooledObject;
import org.apache.commons.pool2.impl.DefaultPooledObject;
import org.apache.commons.pool2.impl.GenericObjectPool;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;

/**
 * Field report 003 with the real commons-pool2 2.11: a Dubbo provider whose Redis connection
 * pool (GenericObjectPool, maxTotal=4) is exhausted. Handler threads 1..48 serve requests that
 * each borrow a connection: 4 hold one for ~2 s in a slow SETEX, 44 are starved in
 * GenericObjectPool.borrowObject, parked on the pool's idle-object deque (its own
 * LinkedBlockingDeque: takeFirst, or pollFirst with a 500 ms borrow timeout for every 4th
 * thread, which then fails and retries). Next to them: 8 idle ThreadPoolExecutor workers
 * (pool-1-thread-1..8, parked in getTask), handler threads 49..51 waiting on a CountDownLatch
 * for database shards that never answer (field report 002), handler threads 52..53 in
 * CompletableFuture.get() for a downstream call that never completes, and the pool's
 * commons-pool-evictor thread.
 */
public class Pool2Exhausted {
    static final String HANDLER = "DubboServerHandler-127.0.0.1:20880-thread-";

    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        GenericObjectPoolConfig<RedisConnection> config = new GenericObjectPoolConfig<>();
        config.setMaxTotal(4);
        config.setMaxIdle(4);
        config.setMaxWait(Duration.ofMillis(-1));  // borrowObject() waits for ever
        config.setTimeBetweenEvictionRuns(Duration.ofSeconds(30));  // starts commons-pool-evictor
        config.setJmxEnabled(false);
        GenericObjectPool<RedisConnection> pool = new GenericObjectPool<>(new RedisConnectionFactory(), config);
        RedisCache cache = new RedisCache(pool);

        ExecutorService async = Executors.newFixedThreadPool(8);  // pool-1-thread-1..8
        ((ThreadPoolExecutor) async).prestartAllCoreThreads();

        for (int i = 1; i <= 48; i++) {
            boolean timed = i % 4 == 0;
            Scenario.startDaemon(HANDLER + i, () -> cache.serve(timed));
        }
        ShardedQuery shards = new ShardedQuery();
        for (int i = 49; i <= 51; i++) {
            Scenario.startDaemon(HANDLER + i, shards::queryForObject);
        }
        DownstreamClient downstream = new DownstreamClient();
        for (int i = 52; i <= 53; i++) {
            Scenario.startDaemon(HANDLER + i, downstream::invoke);
        }

        Scenario.awaitCondition(() -> starved() >= 42
                && Scenario.countThreads(HANDLER, Thread.State.TIMED_WAITING, "RedisConnection.setex") == 4
                && Scenario.countThreads("pool-1-thread-", Thread.State.WAITING,
                        "java.util.concurrent.ThreadPoolExecutor.getTask") == 8
                && Scenario.countThreads(HANDLER, Thread.State.WAITING, "ShardedQuery.queryForObject") == 3
                && Scenario.countThreads(HANDLER, Thread.State.WAITING, "DownstreamClient.invoke") == 2,
                30_000, "42 handler threads starved in borrowObject, 4 holders in RedisConnection.setex, "
                        + "8 idle workers, 3 latch and 2 future waiters");
        Scenario.readyThenRunUntil(deadline);
    }

    private static int starved() {
        String frame = "org.apache.commons.pool2.impl.GenericObjectPool.borrowObject";
        return Scenario.countThreads(HANDLER, Thread.State.WAITING, frame)
                + Scenario.countThreads(HANDLER, Thread.State.TIMED_WAITING, frame);
    }
}

class RedisCache {
    private final GenericObjectPool<RedisConnection> pool;
    private final AtomicLong timeouts = new AtomicLong();

    RedisCache(GenericObjectPool<RedisConnection> pool) {
        this.pool = pool;
    }

    void serve(boolean timedBorrow) {
        long request = 0;
        while (true) {
            try {
                put("detail:" + request++, timedBorrow);
            } catch (NoSuchElementException e) {
                timeouts.incrementAndGet();  // "Timeout waiting for idle object": degraded reply
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    void put(String key, boolean timedBorrow) throws Exception {
        RedisConnection c = timedBorrow ? pool.borrowObject(Duration.ofMillis(500)) : pool.borrowObject();
        try {
            c.setex(key, 300, "{\"sku\":1}");
        } finally {
            pool.returnObject(c);
        }
    }
}

class RedisConnectionFactory extends BasePooledObjectFactory<RedisConnection> {
    private final AtomicLong created = new AtomicLong();

    @Override
    public RedisConnection create() throws InterruptedException {
        Thread.sleep(200);  // TCP connect + AUTH
        return new RedisConnection(created.incrementAndGet());
    }

    @Override
    public PooledObject<RedisConnection> wrap(RedisConnection c) {
        return new DefaultPooledObject<>(c);
    }
}

class RedisConnection {
    final long id;

    RedisConnection(long id) {
        this.id = id;
    }

    void setex(String key, int seconds, String value) throws InterruptedException {
        // A slow command on a saturated Redis shard, with the pooled connection held.
        Thread.sleep(2000);
    }
}

class ShardedQuery {
    private final CountDownLatch shardsAnswered = new CountDownLatch(2);  // never counted down

    void queryForObject() {
        try {
            shardsAnswered.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

class DownstreamClient {
    private final CompletableFuture<String> reply = new CompletableFuture<>();  // never completed

    void invoke() {
        try {
            reply.get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
