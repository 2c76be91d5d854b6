import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

/**
 * Embedded Tomcat 10.1 on 127.0.0.1 whose servlet reads a product cache through a synchronized
 * method that reloads from a slow "database" under the lock. Twelve load-client threads in
 * this JVM send GETs in a loop (12 requests in flight at most, until the lifetime ends), so
 * the request threads http-nio-127.0.0.1-auto-1-exec-N (or ...-PORT-exec-N with a given port)
 * queue BLOCKED at ProductCache.get behind one holder sleeping in ProductCache.reload.
 *
 * <p>Arguments: [lifetime seconds] [port, default 0: ephemeral]. The URL goes to stderr.
 */
public class TomcatSyncCache {
    static final int CLIENTS = 12;
    // Held: java.util.logging keeps loggers weakly. Tomcat's INFO start-up lines are noise here.
    private static final java.util.logging.Logger TOMCAT_LOG = java.util.logging.Logger.getLogger("org.apache");

    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        TOMCAT_LOG.setLevel(java.util.logging.Level.WARNING);
        Path base = Files.createTempDirectory("lockwatch-tomcat-");
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(base.toString());
        Connector connector = new Connector("HTTP/1.1");  // NIO
        connector.setPort(port);
        connector.setProperty("address", "127.0.0.1");
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", base.toString());
        Tomcat.addServlet(context, "catalog", new CatalogServlet(new ProductCache())).addMapping("/products");
        tomcat.start();
        // Nothing here needs the base directory once started (no JSP, no sessions saved): gone
        // now, a JVM killed with SIGKILL (as the tests do) leaves nothing behind.
        deleteTree(base);

        String url = "http://127.0.0.1:" + connector.getLocalPort() + "/products";
        System.err.println("TomcatSyncCache: " + url);
        for (int i = 1; i <= CLIENTS; i++) {
            int sku = i;
            Scenario.startDaemon("load-client-" + i, () -> LoadClient.run(url + "?sku=" + sku, deadline));
        }
        Scenario.awaitCondition(() -> Scenario.countThreads("http-nio-", Thread.State.BLOCKED, "ProductCache.get") >= 8
                && Scenario.countThreads("http-nio-", Thread.State.TIMED_WAITING, "ProductCache.reload") == 1,
                30_000, "8 request threads BLOCKED at ProductCache.get, one holder in ProductCache.reload");
        Scenario.readyThenRunUntil(deadline);
    }

    private static void deleteTree(Path dir) {
        try (var paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: a temporary directory
        }
    }
}

class CatalogServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient ProductCache cache;

    CatalogServlet(ProductCache cache) {
        this.cache = cache;
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String product = cache.get(req.getParameter("sku"));
        resp.setContentType("application/json");
        resp.getWriter().write(product);
    }
}

class ProductCache {
    // Shorter than a reload takes: an entry is stale again by the time the reload returns, so
    // under load every request reloads, holding the monitor (the incident's misconfiguration).
    private static final long TTL_MS = 50;
    private final Map<String, String> products = new HashMap<>();
    private long loadedAt;

    synchronized String get(String sku) {
        if (System.currentTimeMillis() - loadedAt > TTL_MS) {
            reload();
        }
        return products.getOrDefault(sku, "{}");
    }

    private void reload() {
        loadedAt = System.currentTimeMillis();
        // Stands in for a slow SELECT done while holding the cache's monitor.
        try {
            Thread.sleep(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        products.clear();
        for (int i = 1; i <= TomcatSyncCache.CLIENTS; i++) {
            products.put(String.valueOf(i), "{\"sku\":" + i + ",\"price\":" + (100 + i) + "}");
        }
    }
}

final class LoadClient {
    private LoadClient() {
    }

    /** Sends GETs to {@code url} one after the other until {@code deadline}. */
    static void run(String url, long deadline) {
        byte[] buf = new byte[4096];
        while (System.currentTimeMillis() < deadline) {
            try {
                HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
                c.setConnectTimeout(5_000);
                c.setReadTimeout(30_000);
                try (InputStream in = c.getInputStream()) {
                    while (in.read(buf) >= 0) {
                        // drain
                    }
                }
            } catch (IOException e) {
                sleepQuietly(100);  // server not up yet, or going away
            }
        }
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
