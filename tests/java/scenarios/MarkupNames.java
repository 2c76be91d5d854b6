import java.util.ArrayList;
import java.util.List;

/**
 * Thread names that are HTML and script, for the pages' browser tests: if a page ever put a
 * name into its markup unescaped, the name would set document.title to "pwned" or add an
 * element with id "pwned". The holder "<img src=x onerror=...>" sleeps inside Guestbook.hold
 * holding the Guestbook monitor forever; the others are BLOCKED at Guestbook.post, so every name
 * shows in the hot-lock table, the wait-for graph and the stuck-threads list.
 */
public class MarkupNames {
    static final String HOLDER = "<img src=x onerror=\"document.title='pwned'\">";
    static final String[] BLOCKED_NAMES = {
        "\"><script>document.title='pwned'</script>",
        "</title><script>document.body.appendChild(document.createElement('p')).id='pwned'</script>",
        "<svg onload=\"document.title='pwned'\">",
        "' onmouseover='document.title=\"pwned\"",
        "javascript:document.title='pwned'",
    };

    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        Guestbook book = new Guestbook();
        Thread holder = Scenario.startDaemon(HOLDER, book::hold);
        Scenario.awaitState(List.of(holder), Thread.State.TIMED_WAITING, 1, 30_000);
        List<Thread> blocked = new ArrayList<>();
        for (String name : BLOCKED_NAMES) {
            blocked.add(Scenario.startDaemon(name, book::post));
        }
        Scenario.awaitState(blocked, Thread.State.BLOCKED, blocked.size(), 30_000);
        Scenario.readyThenRunUntil(deadline);
    }
}

class Guestbook {
    synchronized void hold() {
        // Never returns: the monitor stays held, so every dump shows the same waiters.
        while (true) {
            try {
                Thread.sleep(1_000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    synchronized void post() {
    }
}
