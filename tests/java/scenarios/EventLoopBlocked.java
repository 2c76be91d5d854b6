import java.util.List;

/**
 * Event-loop threads "reactor-http-nio-N" BLOCKED in a synchronized class loader (field report
 * 001: Spring Cloud Gateway stuck in ClassLoader.loadClass). Each request probes for an optional
 * codec class through PluginLoader.loadClass, which is synchronized on the loader and reads the
 * plugin jar (slowly) under the lock in PluginLoader.readJarEntry. A dump shows one holder and
 * three waiters "- waiting to lock <..> (a PluginLoader)" at PluginLoader.loadClass, called
 * from java.lang.ClassLoader.loadClass.
 */
public class EventLoopBlocked {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        PluginLoader loader = new PluginLoader(EventLoopBlocked.class.getClassLoader());
        HttpCodecRegistry codecs = new HttpCodecRegistry(loader);
        List<Thread> loops = Scenario.startDaemons("reactor-http-nio-", 4, new EventLoop(codecs));
        Scenario.awaitState(loops, Thread.State.BLOCKED, 3, 30_000);
        Scenario.readyThenRunUntil(deadline);
    }
}

class EventLoop implements Runnable {
    private final HttpCodecRegistry codecs;

    EventLoop(HttpCodecRegistry codecs) {
        this.codecs = codecs;
    }

    @Override
    public void run() {
        while (true) {
            codecs.encoderFor("application/x-ndjson");
        }
    }
}

class HttpCodecRegistry {
    private final ClassLoader loader;

    HttpCodecRegistry(ClassLoader loader) {
        this.loader = loader;
    }

    String encoderFor(String mediaType) {
        // Probing an optional module on every request, as in the incident, re-enters the loader.
        try {
            loader.loadClass("com.example.codec.NdjsonModule");
            return "ndjson";
        } catch (ClassNotFoundException e) {
            return "json";
        }
    }
}

class PluginLoader extends ClassLoader {
    PluginLoader(ClassLoader parent) {
        super(parent);
    }

    @Override
    protected synchronized Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        readJarEntry(name);
        return super.loadClass(name, resolve);
    }

    private void readJarEntry(String name) {
        // Stands in for a slow jar read (cold page cache, network file system) under the lock.
        try {
            Thread.sleep(250);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
