import java.nio.file.Path;
import java.util.Arrays;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilder;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilderFactory;
import org.apache.logging.log4j.core.config.builder.impl.BuiltConfiguration;

/**
 * The logback incident (field report 002) with the real log4j2 2.19: sixteen request threads log
 * through one synchronous File appender (immediateFlush, no AsyncLogger) whose file is slow to
 * write (a SlowLogPipe). log4j2 serialises writers on the appender's manager, a FileManager
 * (an OutputStreamManager): one thread holds its monitor in the native file write, the others
 * are BLOCKED on it.
 */
public class Log4j2SyncAppender {
    static final String EXEC = "http-nio-8080-exec-";

    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        Path file = SlowLogPipe.create("app.log", 4096, 100);
        ConfigurationBuilder<BuiltConfiguration> b = ConfigurationBuilderFactory.newConfigurationBuilder();
        b.setStatusLevel(Level.WARN);
        b.setConfigurationName("lockwatch-scenario");
        b.add(b.newAppender("FILE", "File")
                .addAttribute("fileName", file.toString())
                .addAttribute("immediateFlush", true)
                .add(b.newLayout("PatternLayout").addAttribute("pattern",
                        "%d{ISO8601} [%t] %-5level %logger{36} - %msg%n")));
        b.add(b.newRootLogger(Level.INFO).add(b.newAppenderRef("FILE")));
        Configurator.initialize(b.build());  // opens the file, once the pipe's reader is there
        SlowLogPipe.unlink(file);  // open at both ends now

        OrderAuditService service = new OrderAuditService();
        Scenario.startDaemons(EXEC, 16, service::serve);
        Scenario.awaitCondition(() -> Scenario.countThreads(EXEC, Thread.State.BLOCKED,
                "org.apache.logging.log4j.core.appender.AbstractOutputStreamAppender.append") >= 12, 30_000,
                "12 of 16 request threads BLOCKED in AbstractOutputStreamAppender.append");
        Scenario.readyThenRunUntil(deadline);
    }
}

class OrderAuditService {
    private static final Logger LOG = LogManager.getLogger(OrderAuditService.class);
    private static final String PAYLOAD;

    static {
        char[] excerpt = new char[1900];
        Arrays.fill(excerpt, 'y');
        PAYLOAD = new String(excerpt);
    }

    void serve() {
        long order = 0;
        while (true) {
            audit(order++);
        }
    }

    void audit(long order) {
        LOG.info("order {} accepted channel=web payload={}", order, PAYLOAD);
    }
}
