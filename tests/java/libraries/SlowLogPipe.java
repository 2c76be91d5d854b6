import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A log "file" that is slow to write: a FIFO (mkfifo) in a fresh temporary directory, drained
 * by a daemon thread "log-shipper" at a fixed rate. Once the pipe buffer (64 KiB) is full, a
 * logging library's synchronous file appender blocks for real in the native write
 * (java.io.FileOutputStream.writeBytes, RUNNABLE) while holding its appender lock - what a slow
 * or full disk, an NFS mount or a stalled log collector does - and the other logging threads
 * queue on that lock. No sleep in the library's call path.
 *
 * <p>Once the appender has opened it, {@link #unlink} removes the FIFO and its directory: both
 * ends stay open, and a JVM killed with SIGKILL (as the tests do) leaves nothing behind.
 */
final class SlowLogPipe {
    private SlowLogPipe() {
    }

    /**
     * Creates {@code name} as a FIFO in a new temporary directory (deleted at exit at the latest) and
     * starts the reader, which takes {@code chunkBytes} every {@code everyMs} ms.
     */
    static Path create(String name, int chunkBytes, long everyMs) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("lockwatch-slowlog-");
        Path fifo = dir.resolve(name);
        Process mk = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
        if (mk.waitFor() != 0) {
            System.err.println("mkfifo " + fifo + " failed");
            System.exit(2);
        }
        // Deleted in reverse order of registration: the FIFO, then its directory.
        dir.toFile().deleteOnExit();
        fifo.toFile().deleteOnExit();
        Scenario.startDaemon("log-shipper", () -> drain(fifo.toFile(), chunkBytes, everyMs));
        return fifo;
    }

    /** Removes the FIFO and its directory; call it once the appender has opened the FIFO. */
    static void unlink(Path fifo) throws IOException {
        Files.deleteIfExists(fifo);
        Files.deleteIfExists(fifo.getParent());
    }

    private static void drain(File fifo, int chunkBytes, long everyMs) {
        byte[] buf = new byte[chunkBytes];
        // Opening blocks until the appender opens its end for writing.
        try (InputStream in = new FileInputStream(fifo)) {
            while (in.read(buf, 0, buf.length) >= 0) {
                Thread.sleep(everyMs);
            }
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
