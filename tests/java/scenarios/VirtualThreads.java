import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Virtual-thread contention (JDK 21+; on JDK 24+ virtual threads blocked in synchronized unmount).
 * - session-vt-1..4 (virtual) contend on a ReentrantLock at SessionStore.update; the holder sleeps
 *   in SessionStore.persist.
 * - metrics-vt-1..3 (virtual) contend on the MetricsRegistry monitor at MetricsRegistry.record; the
 *   holder sleeps in MetricsRegistry.flush.
 * - platform-monitor-waiter (platform) is BLOCKED at AuditLog.append on the AuditLog monitor held
 *   forever by the virtual thread audit-vt in AuditLog.rotate: jstack shows the waiter but no owner.
 * - tls-init-vt (virtual) sleeps inside a class initializer (TlsConfig.<clinit>), which pins it to
 *   its carrier, so jstack shows a carrier "Carrying virtual thread #N".
 * Unmounted virtual threads appear only in "jcmd PID Thread.dump_to_file".
 */
public class VirtualThreads {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);

        AuditLog audit = new AuditLog();
        Thread auditHolder = Thread.ofVirtual().name("audit-vt").start(audit::rotate);
        Scenario.awaitState(List.of(auditHolder), Thread.State.TIMED_WAITING, 1, 30_000);
        Thread platformWaiter =
                Scenario.startDaemon("platform-monitor-waiter", () -> audit.append("login"));

        SessionStore sessions = new SessionStore();
        List<Thread> sessionThreads = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            sessionThreads.add(Thread.ofVirtual().name("session-vt-" + i).start(sessions::serve));
        }
        MetricsRegistry metrics = new MetricsRegistry();
        List<Thread> metricThreads = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            metricThreads.add(Thread.ofVirtual().name("metrics-vt-" + i).start(metrics::serve));
        }
        Thread tlsInit = Thread.ofVirtual().name("tls-init-vt").start(TlsBootstrap::run);

        Scenario.awaitState(List.of(platformWaiter), Thread.State.BLOCKED, 1, 30_000);
        Scenario.awaitState(sessionThreads, Thread.State.WAITING, 3, 30_000);
        Scenario.awaitState(metricThreads, Thread.State.BLOCKED, 2, 30_000);
        Scenario.awaitState(List.of(tlsInit), Thread.State.TIMED_WAITING, 1, 30_000);
        Scenario.readyThenRunUntil(deadline);
    }

    // Stays here, not in Scenario: the integration test asserts the frame VirtualThreads.sleep.
    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

class SessionStore {
    private final ReentrantLock lock = new ReentrantLock();

    void serve() {
        while (true) {
            update();
        }
    }

    void update() {
        lock.lock();
        try {
            persist();
        } finally {
            lock.unlock();
        }
    }

    private void persist() {
        // Slow write under the lock; the sleeping holder unmounts, the waiters park.
        VirtualThreads.sleep(300);
    }
}

class MetricsRegistry {
    void serve() {
        while (true) {
            record();
        }
    }

    synchronized void record() {
        flush();
    }

    private void flush() {
        VirtualThreads.sleep(300);
    }
}

class AuditLog {
    synchronized void rotate() {
        // Never returns: keeps the monitor owned by a virtual thread for the process lifetime.
        while (true) {
            VirtualThreads.sleep(1_000);
        }
    }

    synchronized void append(String event) {
    }
}

class TlsBootstrap {
    static void run() {
        TlsConfig.load();
    }
}

class TlsConfig {
    static {
        // Blocking in a class initializer pins the virtual thread to its carrier.
        while (!Thread.currentThread().isInterrupted()) {
            VirtualThreads.sleep(1_000);
        }
    }

    static void load() {
    }
}
