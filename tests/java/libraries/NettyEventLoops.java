import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Netty 4.1.48 event loops blocked where an event loop must never block.
 *
 * <p>Group A (the first NioEventLoopGroup, 4 loops): field report 001. Every request probes for
 * optional Jackson modules through CodecPluginClassLoader, which is NOT parallel capable and
 * reads its "plugin jar" slowly in findClass. The absent modules are looked up again on every
 * probe (a failed lookup is not cached), so the loader stays contended. Loops 1 and 3 probe with
 * Class.forName(name, false, loader) (Spring 5's ClassUtils.forName): the JVM itself locks the
 * loader before calling loadClass, so these waiters are BLOCKED in Class.forName0 with no
 * "- waiting to lock" line. Loops 2 and 4 call loader.loadClass(name) (the 001 stack): they are
 * BLOCKED in java.lang.ClassLoader.loadClass with "- waiting to lock <..> (a
 * CodecPluginClassLoader)". The holder sleeps in CodecPluginClassLoader.readEntry.
 *
 * <p>Group B (the second group, 4 loops, also the server's child group): each request writes an
 * access log line synchronously through logback's FileAppender to a slow file (SlowLogPipe):
 * one loop holds the appender's ReentrantLock in the native write, the others park on it.
 *
 * <p>A third group (1 loop) accepts on 127.0.0.1 (ephemeral port): idle in select, RUNNABLE.
 */
public class NettyEventLoops {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        // Before any Netty class: Netty logs through SLF4J, so logback must be configured first.
        java.nio.file.Path log = SlowLogPipe.create("access.log", 4096, 100);
        LogbackFiles.rootToFile(log);
        SlowLogPipe.unlink(log);  // open at both ends now

        NioEventLoopGroup codecLoops = new NioEventLoopGroup(4);
        NioEventLoopGroup accessLogLoops = new NioEventLoopGroup(4);
        NioEventLoopGroup boss = new NioEventLoopGroup(1);
        new ServerBootstrap().group(boss, accessLogLoops).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).sync();

        CodecPluginClassLoader plugins = new CodecPluginClassLoader(
                Map.of("NdjsonCodecModule", classBytes("NdjsonCodecModule")));
        JacksonModuleProbe probe = new JacksonModuleProbe(plugins);
        List<EventLoop> a = loops(codecLoops);
        for (int i = 0; i < a.size(); i++) {
            EventLoop loop = a.get(i);
            boolean viaForName = i % 2 == 0;
            loop.execute(new Request(loop, () -> probe.encoderFor(viaForName)));
        }
        AccessLogHandler accessLog = new AccessLogHandler();
        for (EventLoop loop : loops(accessLogLoops)) {
            loop.execute(new Request(loop, accessLog::channelRead));
        }

        String prefixA = threadNamePrefix(a.get(0));
        String prefixB = threadNamePrefix(loops(accessLogLoops).get(0));
        Scenario.awaitCondition(() -> Scenario.countThreads(prefixA, Thread.State.BLOCKED,
                        "JacksonModuleProbe.registerWellKnownModulesIfAvailable") >= 1
                && Scenario.countThreads(prefixA, Thread.State.BLOCKED, "JacksonModuleProbe.loadModules") >= 1
                && Scenario.countThreads(prefixA, Thread.State.TIMED_WAITING, "CodecPluginClassLoader.findClass") == 1
                && Scenario.countThreads(prefixB, Thread.State.WAITING,
                        "ch.qos.logback.core.OutputStreamAppender.writeBytes") >= 2,
                30_000, "event loops of " + prefixA + "* BLOCKED in class loading (both ways) and of "
                        + prefixB + "* parked on the logback appender");
        Scenario.readyThenRunUntil(deadline);
    }

    private static List<EventLoop> loops(NioEventLoopGroup group) {
        List<EventLoop> loops = new ArrayList<>();
        for (EventExecutor e : group) {
            loops.add((EventLoop) e);
        }
        return loops;
    }

    /** "nioEventLoopGroup-2-" for the loop named "nioEventLoopGroup-2-1". */
    private static String threadNamePrefix(EventLoop loop) throws Exception {
        String name = loop.submit(() -> Thread.currentThread().getName()).get();
        return name.substring(0, name.lastIndexOf('-') + 1);
    }

    private static byte[] classBytes(String name) throws IOException {
        try (InputStream in = NettyEventLoops.class.getResourceAsStream("/" + name + ".class")) {
            return in.readAllBytes();
        }
    }
}

/** One request's work on an event loop, then the next request queued on the same loop. */
class Request implements Runnable {
    private final EventLoop loop;
    private final Runnable work;

    Request(EventLoop loop, Runnable work) {
        this.loop = loop;
        this.work = work;
    }

    @Override
    public void run() {
        work.run();
        loop.execute(this);
    }
}

/** Like Jackson2ObjectMapperBuilder.registerWellKnownModulesIfAvailable, run per request. */
class JacksonModuleProbe {
    private static final String[] WELL_KNOWN = {
        "NdjsonCodecModule",  // in the plugin jar: defined from its bytes on the first probe
        "com.fasterxml.jackson.datatype.jdk8.Jdk8Module",  // absent, looked up every time
        "com.fasterxml.jackson.datatype.jsr310.JavaTimeModule",
        "com.fasterxml.jackson.module.kotlin.KotlinModule",
    };
    private final ClassLoader loader;

    JacksonModuleProbe(ClassLoader loader) {
        this.loader = loader;
    }

    String encoderFor(boolean viaForName) {
        return viaForName ? registerWellKnownModulesIfAvailable() : loadModules();
    }

    /** Spring 5's ClassUtils.forName: Class.forName(name, false, loader). */
    String registerWellKnownModulesIfAvailable() {
        int found = 0;
        for (String name : WELL_KNOWN) {
            try {
                Class.forName(name, false, loader);
                found++;
            } catch (ClassNotFoundException e) {
                // optional module not present
            }
        }
        return found + " modules";
    }

    /** The 001 stack: loader.loadClass(name) directly. */
    String loadModules() {
        int found = 0;
        for (String name : WELL_KNOWN) {
            try {
                loader.loadClass(name);
                found++;
            } catch (ClassNotFoundException e) {
                // optional module not present
            }
        }
        return found + " modules";
    }
}

/**
 * A plugin class loader that is not parallel capable (it never calls
 * registerAsParallelCapable), so class loading through it locks the loader object itself.
 * Its parent is the platform loader: the application's classes are not visible through it, so
 * NdjsonCodecModule is defined here from the bytes of the "plugin jar".
 */
class CodecPluginClassLoader extends ClassLoader {
    private final Map<String, byte[]> jar;

    CodecPluginClassLoader(Map<String, byte[]> jar) {
        super(ClassLoader.getPlatformClassLoader());
        this.jar = jar;
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
        byte[] bytes = readEntry(name);
        if (bytes == null) throw new ClassNotFoundException(name);
        return defineClass(name, bytes, 0, bytes.length);
    }

    private byte[] readEntry(String name) {
        // Stands in for scanning a large plugin jar on a cold disk, under the loader's lock.
        try {
            Thread.sleep(150);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return jar.get(name);
    }
}

/** The plugin class: only its bytes are used, CodecPluginClassLoader defines it. */
class NdjsonCodecModule {
    @Override
    public String toString() {
        return "application/x-ndjson";
    }
}

class AccessLogHandler {
    private static final Logger LOG = LoggerFactory.getLogger(AccessLogHandler.class);
    private static final String LINE = "x".repeat(1900);
    private final AtomicLong requests = new AtomicLong();

    void channelRead() {
        LOG.info("127.0.0.1 - - \"GET /api/v1/json HTTP/1.1\" 200 {} {}", requests.incrementAndGet(), LINE);
    }
}
