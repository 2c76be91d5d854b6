import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Field report 002 with the real logback 1.2.11: sixteen Tomcat-named request threads log every
 * request through one synchronous FileAppender whose file is slow to write (a SlowLogPipe). One
 * thread at a time holds the appender's ReentrantLock and sits in the native file write; the
 * others park on it in ch.qos.logback.core.OutputStreamAppender.writeBytes.
 */
public class LogbackSyncAppender {
    static final String EXEC = "http-nio-8080-exec-";

    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        java.nio.file.Path log = SlowLogPipe.create("access.log", 4096, 100);
        LogbackFiles.rootToFile(log);
        SlowLogPipe.unlink(log);  // open at both ends now
        AccessLogFilter filter = new AccessLogFilter();
        Scenario.startDaemons(EXEC, 16, filter::serve);
        Scenario.awaitCondition(() -> Scenario.countThreads(EXEC, Thread.State.WAITING,
                "ch.qos.logback.core.OutputStreamAppender.writeBytes") >= 12, 30_000,
                "12 of 16 request threads parked in OutputStreamAppender.writeBytes");
        Scenario.readyThenRunUntil(deadline);
    }
}

class AccessLogFilter {
    private static final Logger LOG = LoggerFactory.getLogger(AccessLogFilter.class);
    // A request logged with its headers and a payload excerpt: about 2 KiB per line.
    private static final String HEADERS;

    static {
        char[] excerpt = new char[1900];
        Arrays.fill(excerpt, 'x');
        HEADERS = "Accept=application/json User-Agent=okhttp/4.9.3 body=" + new String(excerpt);
    }

    void serve() {
        long request = 0;
        while (true) {
            doFilter(request++);
        }
    }

    void doFilter(long request) {
        LOG.info("request {} GET /api/v1/orders?page={} {}", request, request % 50, HEADERS);
    }
}
