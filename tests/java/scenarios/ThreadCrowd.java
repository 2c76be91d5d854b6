import java.util.List;

/**
 * A crowd of waiting threads, each some twenty frames deep, so one thread dump is large
 * (about 3 MB with the default 2000 threads), and a "pulse" thread that prints
 * "PULSE n epoch-millis" every 100 ms: a gap between two pulses is a time the application
 * did not run, e.g. held at a safepoint by a dump whose reader stopped reading. Args: the
 * lifetime in seconds, the number of crowd threads. Compiles with --release 17.
 */
public class ThreadCrowd {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        int count = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        Object gate = new Object();
        List<Thread> crowd = Scenario.startDaemons("crowd-worker-", count, () -> CrowdWork.descend(gate, 20));
        Scenario.awaitState(crowd, Thread.State.WAITING, count, 120_000, 50);
        Scenario.startDaemon("pulse", CrowdPulse::run);
        Scenario.readyThenRunUntil(deadline);
    }
}

class CrowdWork {
    static void descend(Object gate, int depth) {
        if (depth > 0) {
            descend(gate, depth - 1);
            return;
        }
        synchronized (gate) {
            while (true) {
                try {
                    gate.wait();
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }
}

class CrowdPulse {
    static void run() {
        for (long n = 0; ; n++) {
            System.out.println("PULSE " + n + " " + System.currentTimeMillis());
            System.out.flush();
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
        }
    }
}
