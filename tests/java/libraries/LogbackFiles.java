import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.FileAppender;
import java.nio.file.Path;
import org.slf4j.LoggerFactory;

/**
 * Logback 1.2 configured in code as a typical logback.xml would: the root logger at INFO to a
 * synchronous FileAppender (PatternLayoutEncoder, immediateFlush=true, no AsyncAppender).
 * Every logging thread takes the appender's ReentrantLock in OutputStreamAppender.writeBytes.
 */
final class LogbackFiles {
    private LogbackFiles() {
    }

    static void rootToFile(Path file) {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.reset();  // drops the default console appender
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern("%d{ISO8601} [%thread] %-5level %logger{36} - %msg%n");
        encoder.start();
        FileAppender<ILoggingEvent> appender = new FileAppender<>();
        appender.setContext(context);
        appender.setName("FILE");
        appender.setFile(file.toString());
        appender.setEncoder(encoder);
        appender.setImmediateFlush(true);
        appender.start();  // opens the file: for a SlowLogPipe, once its reader is there
        if (!appender.isStarted()) {
            System.err.println("logback: the FileAppender for " + file + " did not start");
            System.exit(2);
        }
        ch.qos.logback.classic.Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.INFO);
        root.addAppender(appender);
    }
}
