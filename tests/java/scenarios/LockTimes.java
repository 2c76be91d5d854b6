import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;

/**
 * Three locks whose holders do known things while others wait, and the truth to compare with:
 * <ul>
 * <li>SpinLedger: "ledger-holder" spins on CPU for 1.5 s at a time inside the lock;</li>
 * <li>NapBook: "nap-holder" sleeps for 1.5 s at a time inside the lock;</li>
 * <li>LongVault: "vault-holder" waits in ServerSocket.accept() (I/O) for 4 s at a time inside the lock.</li>
 * </ul>
 * Each holder lets go for 400 ms between holds (longer than the sampling interval, so that the
 * samples see each hold end). Three clients per lock take it every millisecond and are BLOCKED
 * while it is held. Every 250 ms a line
 * "TRUTH seq wall_ms=.. ledger_blocked_ms=.. nap_blocked_ms=.. vault_blocked_ms=.. vault_hold_ms=.. ledger_cpu_ms=.."
 * gives the JVM's own figures: blocked time (thread contention monitoring) summed over each lock's
 * threads, how long the current vault hold has lasted, and the ledger holder's CPU time.
 */
public class LockTimes {
    static volatile long vaultHoldStart = 0;  // System.nanoTime() of the current vault hold, 0 when free

    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        mx.setThreadContentionMonitoringEnabled(true);
        SpinLedger ledger = new SpinLedger();
        NapBook book = new NapBook();
        LongVault vault = new LongVault();
        List<Thread> clients = new ArrayList<>();
        Thread ledgerHolder = Scenario.startDaemon("ledger-holder", () -> { while (true) { ledger.hold(1500); pause(400); } });
        Scenario.startDaemon("nap-holder", () -> { while (true) { book.hold(1500); pause(400); } });
        Scenario.startDaemon("vault-holder", () -> { while (true) { vault.hold(4000); pause(400); } });
        pause(100);  // the holders take their locks first
        clients.addAll(Scenario.startDaemons("ledger-client-", 3, () -> { while (true) { ledger.touch(); pause(1); } }));
        clients.addAll(Scenario.startDaemons("nap-client-", 3, () -> { while (true) { book.touch(); pause(1); } }));
        clients.addAll(Scenario.startDaemons("vault-client-", 3, () -> { while (true) { vault.touch(); pause(1); } }));
        Scenario.awaitState(clients, Thread.State.BLOCKED, 6, 30_000);
        Scenario.startDaemon("truth", () -> report(mx, ledgerHolder.getId()));
        Scenario.readyThenRunUntil(deadline);
    }

    static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static long blockedMs(ThreadMXBean mx, String prefix) {
        long sum = 0;
        for (ThreadInfo info : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (info != null && info.getThreadName().startsWith(prefix) && info.getBlockedTime() > 0) sum += info.getBlockedTime();
        }
        return sum;
    }

    static void report(ThreadMXBean mx, long ledgerHolderId) {
        for (long seq = 1; ; seq++) {
            long start = vaultHoldStart;
            long holdMs = start == 0 ? 0 : (System.nanoTime() - start) / 1_000_000;
            System.out.println("TRUTH " + seq + " wall_ms=" + System.currentTimeMillis() + " ledger_blocked_ms=" + blockedMs(mx, "ledger-") + " nap_blocked_ms="
                    + blockedMs(mx, "nap-") + " vault_blocked_ms=" + blockedMs(mx, "vault-") + " vault_hold_ms=" + holdMs
                    + " ledger_cpu_ms=" + mx.getThreadCpuTime(ledgerHolderId) / 1_000_000 + " .");
            System.out.flush();
            pause(250);
        }
    }
}

class SpinLedger {
    private long count;

    synchronized void hold(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        while (System.nanoTime() < end) count++;  // on CPU the whole time
    }

    synchronized void touch() {
        count++;
    }
}

class NapBook {
    private long count;

    synchronized void hold(long ms) {
        LockTimes.pause(ms);  // Thread.sleep inside the lock
    }

    synchronized void touch() {
        count++;
    }
}

class LongVault {
    private long count;
    private final ServerSocket socket;

    LongVault() throws IOException {
        socket = new ServerSocket(0);
    }

    synchronized void hold(long ms) {
        LockTimes.vaultHoldStart = System.nanoTime();
        try {
            socket.setSoTimeout((int) ms);
            socket.accept().close();  // nobody connects: accept() waits in I/O until the timeout
        } catch (SocketTimeoutException e) {
            // the hold's end
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } finally {
            LockTimes.vaultHoldStart = 0;
        }
    }

    synchronized void touch() {
        count++;
    }
}
