import java.util.ArrayList;
import java.util.List;

/**
 * Threads with hostile names, some BLOCKED on one shared Registry monitor so that per-lock
 * counts expose mis-parsed headers. Thread names are printed raw (no escaping) in dumps.
 *
 * Holder "线程-ü" sleeps inside Registry.rebuild holding the Registry monitor forever.
 * BLOCKED at Registry.lookup (6): "odd \"quoted\" name", "name with\nnewline", "" (empty),
 * the imitation header, the name with an embedded state line + header, and "dup-worker".
 * Sleeping in Heartbeat.idle, not blocked (3): a second "dup-worker", "trailing spaces  ",
 * "tab\tname".
 */
public class OddNames {
    static final String[] BLOCKED_NAMES = {
        "odd \"quoted\" name",
        "name with\nnewline",
        "",
        "fake\" #99 daemon prio=5 os_prio=0 tid=0x0 nid=0x0 runnable  [0x0]",
        "multi-line\n   java.lang.Thread.State: RUNNABLE\n"
            + "\"injected-header\" #98 daemon prio=5 os_prio=0 cpu=0.00ms elapsed=0.00s"
            + " tid=0x0000000000000000 nid=0x0 waiting on condition  [0x0000000000000000]",
        "dup-worker",
    };
    static final String[] IDLE_NAMES = {"dup-worker", "trailing spaces  ", "tab\tname"};

    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        Registry registry = new Registry();

        Thread holder = Scenario.startDaemon("线程-ü", registry::rebuild);
        Scenario.awaitState(List.of(holder), Thread.State.TIMED_WAITING, 1, 30_000);

        List<Thread> blocked = new ArrayList<>();
        for (String name : BLOCKED_NAMES) {
            blocked.add(Scenario.startDaemon(name, () -> registry.lookup("plugin")));
        }
        List<Thread> idle = new ArrayList<>();
        for (String name : IDLE_NAMES) {
            idle.add(Scenario.startDaemon(name, Heartbeat::idle));
        }
        Scenario.awaitState(blocked, Thread.State.BLOCKED, blocked.size(), 30_000);
        Scenario.awaitState(idle, Thread.State.TIMED_WAITING, idle.size(), 30_000);
        Scenario.readyThenRunUntil(deadline);
    }
}

class Registry {
    synchronized void rebuild() {
        // Never returns: the monitor stays held so the BLOCKED count is exact in every dump.
        while (true) {
            try {
                Thread.sleep(1_000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    synchronized String lookup(String key) {
        return key;
    }
}

class Heartbeat {
    static void idle() {
        while (true) {
            try {
                Thread.sleep(1_000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }
}
