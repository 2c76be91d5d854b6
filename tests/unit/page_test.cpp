// SPDX-License-Identifier: Apache-2.0
// The pages' views and HTML without a browser: frame names, the flame and wait-for graphs,
// escaping of hostile names, the policy hash, and the size bound for huge inputs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <sstream>

#include "analyze_command.hpp"
#include "lockwatch/page/html.hpp"
#include "lockwatch/page/view.hpp"
#include "lockwatch/parser/dump_parser.hpp"
#include "test_support.hpp"

using namespace lockwatch;

namespace {

// jstack text built thread by thread, in the format JDK 17 prints.
class DumpText {
 public:
  // BLOCKED on `addr` at `site`; holding `held` (taken in Outer.hold) when given.
  DumpText& waiter(const std::string& name, const std::string& addr, const std::string& cls, const std::string& site,
                   const std::string& held = "", const std::string& held_cls = "", const std::vector<std::string>& callers = {}) {
    header(name, "waiting for monitor entry", "BLOCKED (on object monitor)");
    frame(site);
    text_ += "\t- waiting to lock <" + addr + "> (a " + cls + ")\n";
    if (!held.empty()) frame("Outer.hold"), text_ += "\t- locked <" + held + "> (a " + held_cls + ")\n";
    for (const auto& f : callers) frame(f);
    return tail();
  }
  // Holds `addr` (taken in Holder.take), sleeping in `busy`.
  DumpText& holder(const std::string& name, const std::string& addr, const std::string& cls, const std::string& busy) {
    header(name, "waiting on condition", "TIMED_WAITING (sleeping)");
    text_ += "\tat java.lang.Thread.sleep(java.base@17.0.21.1/Native Method)\n";
    frame(busy);
    frame("Holder.take");
    text_ += "\t- locked <" + addr + "> (a " + cls + ")\n";
    return tail();
  }
  // Parked on a j.u.c. lock at `site`; no -l, so its owner is not listed.
  DumpText& parked(const std::string& name, const std::string& addr, const std::string& site) {
    header(name, "waiting on condition", "WAITING (parking)");
    text_ += "\tat jdk.internal.misc.Unsafe.park(java.base@17.0.21.1/Native Method)\n";
    text_ += "\t- parking to wait for  <" + addr + "> (a java.util.concurrent.locks.ReentrantLock$NonfairSync)\n";
    text_ += "\tat java.util.concurrent.locks.LockSupport.park(java.base@17.0.21.1/LockSupport.java:211)\n";
    frame(site);
    return tail();
  }
  // A thread with these frames (innermost first), not waiting.
  DumpText& running(const std::string& name, const std::vector<std::string>& frames) {
    header(name, "runnable", "RUNNABLE");
    for (const auto& f : frames) frame(f);
    return tail();
  }
  std::string str() const { return "Full thread dump OpenJDK 64-Bit Server VM (17.0.21.1+2 mixed mode, sharing):\n\n" + text_ + "JNI global refs: 9, weak refs: 0\n\n"; }

 private:
  void header(const std::string& name, const std::string& status, const std::string& state) {
    ++id_;
    text_ += "\"" + name + "\" #" + std::to_string(id_) + " prio=5 os_prio=0 cpu=1.00ms elapsed=2.00s tid=0x00007f00" +
             std::to_string(10000000 + id_) + " nid=0x" + std::to_string(id_) + " " + status + "  [0x00007f0000000000]\n";
    text_ += "   java.lang.Thread.State: " + state + "\n";
  }
  void frame(const std::string& method) { text_ += "\tat " + method + "(App.java:" + std::to_string(10 + id_ % 90) + ")\n"; }
  DumpText& tail() {
    text_ += "\tat java.lang.Thread.run(java.base@17.0.21.1/Thread.java:833)\n\n";
    return *this;
  }
  std::string text_;
  int id_ = 0;
};

const view::GraphNode* node_named(const view::WaitGraph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

std::size_t index_of(const view::WaitGraph& g, const view::GraphNode* n) { return static_cast<std::size_t>(n - g.nodes.data()); }

bool has_edge(const view::WaitGraph& g, const view::GraphNode* from, const view::GraphNode* to, bool deadlock = false) {
  return std::any_of(g.edges.begin(), g.edges.end(), [&](const view::GraphEdge& e) {
    return e.from == index_of(g, from) && e.to == index_of(g, to) && e.deadlock == deadlock;
  });
}

view::WaitGraph graph_of(const std::string& text, const view::Limits& limits = {}) {
  const auto dump = test::parse_one(text);
  return view::build_wait_graph(dump, analysis::build_lock_graph(dump), limits);
}

std::string analyze_html(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("lockwatch-page-" + name + ".txt");
  test::write_file(path, text);
  std::ostringstream out, err;
  const auto file = path.string();
  const std::vector<std::string_view> args{"--format", "html", file};
  const auto code = app::run_analyze(args, out, err);
  INFO(err.str());
  REQUIRE(code == 0);
  return out.str();
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

TEST_CASE("frame names: generated-class numbers and hashes are taken out, the rest kept", "[page][flame]") {
  using view::normalize_frame;
  CHECK(normalize_frame("Foo$$Lambda$123/0x0000000800c0b440.run") == "Foo$$Lambda.run");          // JDK 17
  CHECK(normalize_frame("Foo$$Lambda/0x000001f80b0a4c58.run") == "Foo$$Lambda.run");              // JDK 21+
  CHECK(normalize_frame("Foo$$Lambda$7/1831932724.run") == "Foo$$Lambda.run");                    // JDK 8
  CHECK(normalize_frame("java.lang.invoke.LambdaForm$MH/0x0000000800c0c000.invoke") == "java.lang.invoke.LambdaForm$MH.invoke");
  CHECK(normalize_frame("com.sun.proxy.$Proxy42.find") == "com.sun.proxy.$Proxy.find");
  CHECK(normalize_frame("jdk.proxy2.$Proxy17.find") == "jdk.proxy.$Proxy.find");
  CHECK(normalize_frame("com.shop.Repo$$EnhancerBySpringCGLIB$$abc123.save") == "com.shop.Repo$$EnhancerBySpringCGLIB.save");
  CHECK(normalize_frame("com.shop.Repo$$SpringCGLIB$$0.save") == "com.shop.Repo$$SpringCGLIB.save");
  CHECK(normalize_frame("jdk.internal.reflect.GeneratedMethodAccessor17.invoke") == "jdk.internal.reflect.GeneratedMethodAccessor.invoke");
  CHECK(normalize_frame("com.shop.Order$HibernateProxy$Xy12Ab.getId") == "com.shop.Order$HibernateProxy.getId");
  // Names that only look alike stay as they are.
  CHECK(normalize_frame("com.shop.Cache$Entry.get") == "com.shop.Cache$Entry.get");
  CHECK(normalize_frame("com.shop.$ProxyFactory.create") == "com.shop.$ProxyFactory.create");
  CHECK(normalize_frame("com.shop.Order2.total") == "com.shop.Order2.total");
  CHECK(normalize_frame("a$$b.c") == "a$$b.c");
}

TEST_CASE("flame graph: equal code merges, widths add up, the budget holds", "[page][flame]") {
  view::FlameBuilder b;
  b.add_stack({"Thread.run", "Foo$$Lambda$1/0x01.run", "Cache.get"}, 3);
  b.add_stack({"Thread.run", "Foo$$Lambda$2/0x02.run", "Cache.get"}, 2);  // another run's lambda number
  b.add_stack({"Thread.run", "Pool.borrow"}, 5);
  const auto f = b.finish(100);
  CHECK(f.total == 10);
  REQUIRE(f.frames.size() == 5);  // all, Thread.run, Foo$$Lambda.run, Cache.get, Pool.borrow
  CHECK(f.frames[0].name == "all");
  CHECK(f.frames[1].name == "Thread.run");
  CHECK(f.frames[1].value == 10);
  CHECK(f.frames[2].name == "Foo$$Lambda.run");
  CHECK(f.frames[2].value == 5);
  CHECK(f.frames[2].offset == 0);
  CHECK(f.frames[3].name == "Cache.get");
  CHECK(f.frames[3].depth == 3);
  CHECK(f.frames[4].name == "Pool.borrow");
  CHECK(f.frames[4].offset == 5);  // right of its sibling
  CHECK(f.depth == 3);

  view::FlameBuilder collapsed;
  collapsed.add_collapsed("a;b;c 4\na;d 1\nnot a line\n");
  const auto g = collapsed.finish(100);
  CHECK(g.total == 5);
  CHECK(g.frames.size() == 5);

  view::FlameBuilder wide;  // 5000 distinct stacks: at most the budget is kept
  for (int i = 0; i < 5000; ++i) wide.add_stack({"root", "leaf" + std::to_string(i)}, static_cast<std::uint64_t>(1 + i % 7));
  const auto w = wide.finish(300);
  CHECK(w.frames.size() <= 300);
  CHECK(w.omitted == 5002 - w.frames.size());
  CHECK(w.frames[1].value == w.total);
}

TEST_CASE("flame graph: the stacks of the lock graph's waiters, idle threads left out", "[page][flame]") {
  DumpText d;
  d.holder("holder", "0x00000000aa000001", "Cache", "Db.query").waiter("w-1", "0x00000000aa000001", "Cache", "Cache.get");
  d.running("busy", {"Cpu.spin"});
  const auto dump = test::parse_one(d.str());
  view::FlameBuilder b;
  b.add_dump(dump, analysis::build_lock_graph(dump));
  const auto f = b.finish(100);
  CHECK(f.total == 1);  // only the waiter
  CHECK(f.frames.back().name == "Cache.get");
  CHECK(f.dumps == 1);
}

TEST_CASE("wait-for graph: chains to their root, folded waiters, deadlocks, unknown owners", "[page][graph]") {
  DumpText d;
  d.holder("root", "0x00000000aa000001", "Pool", "Db.query");
  d.waiter("mid", "0x00000000aa000001", "Pool", "Pool.get", "0x00000000bb000001", "Cache");
  for (int i = 1; i <= 5; ++i) d.waiter("w-" + std::to_string(i), "0x00000000bb000001", "Cache", "Cache.get");
  d.waiter("d1", "0x00000000cc000001", "Left", "Left.take", "0x00000000dd000001", "Right");
  d.waiter("d2", "0x00000000dd000001", "Right", "Right.take", "0x00000000cc000001", "Left");
  d.parked("p-1", "0x00000000ee000001", "Queue.put").parked("p-2", "0x00000000ee000001", "Queue.put");
  d.running("idle", {"Cpu.spin"});
  const auto g = graph_of(d.str());
  CHECK(g.waiting_threads == 10);
  CHECK(g.deadlocks == 1);
  CHECK(g.chains == 3);
  CHECK(g.omitted_chains == 0);
  const auto* root = node_named(g, "root");
  const auto* mid = node_named(g, "mid");
  const auto* group = node_named(g, "w-N");
  REQUIRE((root && mid && group));
  CHECK(root->depth == 0);
  CHECK(root->site == "Db.query");  // where the root is busy: Thread.sleep is plumbing
  CHECK(mid->depth == 1);
  CHECK(mid->site == "Pool.get");
  CHECK(group->kind == view::NodeKind::group);
  CHECK(group->threads == 5);
  CHECK(group->depth == 2);
  CHECK(group->names.size() == 5);
  CHECK(has_edge(g, group, mid));
  CHECK(has_edge(g, mid, root));
  CHECK(mid->row == Approx(group->row));  // a parent sits level with the middle of its children
  CHECK(root->row == Approx(mid->row));
  const auto* d1 = node_named(g, "d1");
  const auto* d2 = node_named(g, "d2");
  REQUIRE((d1 && d2));
  CHECK(d1->deadlocked);
  CHECK(d2->deadlocked);
  CHECK(has_edge(g, d1, d2, true));
  CHECK(has_edge(g, d2, d1, true));
  CHECK_FALSE(root->deadlocked);
  const auto unknown = std::find_if(g.nodes.begin(), g.nodes.end(), [](const auto& n) { return n.kind == view::NodeKind::unknown_holder; });
  REQUIRE(unknown != g.nodes.end());
  CHECK(unknown->lock_kind == analysis::LockKind::park);
  CHECK(node_named(g, "p-N") != nullptr);
  CHECK(node_named(g, "idle") == nullptr);  // not part of any chain
  // Rows: every box on its own row, children around their parent.
  std::vector<double> rows;
  for (const auto& n : g.nodes) rows.push_back(n.row);
  CHECK(*std::max_element(rows.begin(), rows.end()) < g.rows);
}

TEST_CASE("wait-for graph: a 10 000-thread chain and 3000 chains stay within the box budget", "[page][graph][limits]") {
  view::Limits limits;
  SECTION("one chain through every thread: cut at graph_depth, the rest one box") {
    DumpText d;
    const int n = 10'000;
    auto addr = [](int i) { return "0x00000000a" + std::to_string(1000000 + i); };
    d.holder("t" + std::to_string(n), addr(n), "L", "Work.run");
    for (int i = n - 1; i >= 1; --i) d.waiter("t" + std::to_string(i), addr(i + 1), "L", "Chain.step", addr(i), "L");
    const auto g = graph_of(d.str(), limits);
    CHECK(g.waiting_threads == n - 1);
    CHECK(g.nodes.size() <= limits.graph_depth + 2);
    CHECK(g.depth <= limits.graph_depth + 1);
    const auto more = std::find_if(g.nodes.begin(), g.nodes.end(), [](const auto& x) { return x.kind == view::NodeKind::more; });
    REQUIRE(more != g.nodes.end());
    CHECK(more->threads == n - 1 - limits.graph_depth);
  }
  SECTION("3000 holders with three waiters each: the biggest drawn, the rest counted") {
    DumpText d;
    for (int h = 0; h < 3000; ++h) {
      const auto a = "0x00000000b" + std::to_string(1000000 + h);
      d.holder("h" + std::to_string(h), a, "Lock" + std::to_string(h), "Work.run");
      for (int w = 0; w < 3; ++w) d.waiter("h" + std::to_string(h) + "-w" + std::to_string(w), a, "Lock" + std::to_string(h), "Site.get");
    }
    const auto g = graph_of(d.str(), limits);
    CHECK(g.nodes.size() <= 2 * limits.graph_nodes);
    CHECK(g.omitted_chains > 0);
    CHECK(g.chains + g.omitted_chains == 3000);
    std::size_t drawn = 0;
    for (const auto& x : g.nodes) drawn += x.kind == view::NodeKind::thread ? 1 : x.threads;
    CHECK(drawn + g.omitted_threads == 12'000);
  }
}

TEST_CASE("analyze --format html: hostile names are text, never markup", "[page][security]") {
  const std::vector<std::string> hostile = {
      "<img src=x onerror=\"document.title='pwned'\">",
      "\"><script>document.title='pwned'</script>",
      "</title><script>alert(1)</script>",
      "\xE2\x80\xAE" "evil-bidi",  // U+202E, right-to-left override
  };
  DumpText d;
  d.holder(hostile[0], "0x00000000aa000001", "X<svg onload=alert(1)>", "Db.query");
  for (std::size_t i = 1; i < hostile.size(); ++i) d.waiter(hostile[i], "0x00000000aa000001", "X<svg onload=alert(1)>", "Cache.get");
  const auto html = analyze_html("hostile", d.str());
  const auto l = lower(html);
  CHECK(l.find("<img") == std::string::npos);
  CHECK(l.find("<svg onload") == std::string::npos);
  CHECK(count_of(l, "<script") == 0);  // the report has no script of its own either
  CHECK(l.find("</title><script") == std::string::npos);
  CHECK(html.find("&lt;img src=x onerror=&quot;document.title=&#39;pwned&#39;&quot;&gt;") != std::string::npos);
  CHECK(html.find("&quot;&gt;&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("\\u202Eevil-bidi") != std::string::npos);
  CHECK(html.find("\xE2\x80\xAE") == std::string::npos);
  CHECK(count_of(html.substr(0, html.find("</head>")), "<title>") == 1);
  // Every attribute value is quoted: nothing a name holds can end one.
  CHECK_FALSE(std::regex_search(html, std::regex(R"re(<[a-z]+[^>]* on[a-z]+=)re", std::regex::icase)));
}

TEST_CASE("analyze --format html: self-contained, its policy matches its one stylesheet", "[page][security]") {
  CHECK(page::sha256_base64("abc") == "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");  // FIPS 180-2 example
  CHECK(page::sha256_base64("") == "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
  DumpText d;
  d.holder("h", "0x00000000aa000001", "Cache", "Db.query").waiter("w", "0x00000000aa000001", "Cache", "Cache.get");
  const auto html = analyze_html("policy", d.str());
  std::smatch csp, style;
  REQUIRE(std::regex_search(html, csp, std::regex(R"re(<meta http-equiv="Content-Security-Policy" content="([^"]*)">)re")));
  const auto policy = csp[1].str();
  CHECK(policy.find("default-src 'none'") != std::string::npos);
  CHECK(policy.find("script-src") == std::string::npos);  // falls back to 'none'
  CHECK(policy.find("http") == std::string::npos);
  const auto open = html.find("<style>"), close = html.find("</style>");
  REQUIRE((open != std::string::npos && close != std::string::npos));
  CHECK(count_of(html, "<style>") == 1);
  CHECK(policy.find("'sha256-" + page::sha256_base64(html.substr(open + 7, close - open - 7)) + "'") != std::string::npos);
  CHECK(html.find("<meta http-equiv=\"Content-Security-Policy\"") < open);  // a meta policy covers only what follows it
  CHECK_FALSE(std::regex_search(html, std::regex(R"re((src|href)="(https?:)?//)re", std::regex::icase)));
  CHECK(html.find(" style=\"") == std::string::npos);  // no inline style attribute: the policy would drop it
  CHECK(html.find("Cache.get") != std::string::npos);
  CHECK(html.find("<svg class=\"chart\"") != std::string::npos);
  CHECK(html.find("<svg class=\"graph\"") != std::string::npos);
  CHECK(html.find("<svg class=\"flame\"") != std::string::npos);
}

TEST_CASE("live page: its own assets only, names in links percent-encoded and escaped", "[page][security]") {
  page::LivePage p;
  p.now = 1'800'000'000;
  view::Health h;
  h.target = "shop\"><script>alert(1)</script>";
  h.cmdline = "java -Dx=\"'><script>alert(2)</script> Shop";  // a command line is the application's too
  h.up = true;
  h.top_lock = "monitor <b>Cache</b> at Cache.get";
  h.top_waiters = 3;
  p.targets.push_back(h);
  p.incidents.push_back({"20261130T101500Z-shop&co", 3, 4096, true});
  const auto html = page::render_live(p);
  CHECK(count_of(html, "<script") == 1);
  CHECK(html.find("<script src=\"assets/lockwatch.js\" defer></script>") != std::string::npos);
  CHECK(html.find("<link rel=\"stylesheet\" href=\"assets/lockwatch.css\">") != std::string::npos);
  CHECK(html.find("href=\"?target=shop%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E\"") != std::string::npos);
  CHECK(html.find("shop&quot;&gt;&lt;script&gt;") != std::string::npos);
  CHECK(html.find("title=\"java -Dx=&quot;&#39;&gt;&lt;script&gt;alert(2)") != std::string::npos);
  CHECK(html.find("<b>Cache</b>") == std::string::npos);
  CHECK(html.find("href=\"incidents/20261130T101500Z-shop%26co/report.html\"") != std::string::npos);
  CHECK(html.find("data-refresh=\"5\"") != std::string::npos);
  CHECK(html.find("<main>") != std::string::npos);  // what the script swaps
  const auto csp = page::live_csp();
  CHECK(csp.find("script-src 'self'") != std::string::npos);
  CHECK(csp.find("unsafe") == std::string::npos);
  CHECK(csp.find("frame-ancestors 'none'") != std::string::npos);
  CHECK(page::script().find("innerHTML") == std::string::npos);  // swapped as parsed nodes, never as markup in a string
}

TEST_CASE("pages: 10 000 threads or 600 samples stay within the stated size", "[page][limits]") {
  // The worst case for size: every name and frame long and distinct, so nothing folds.
  const std::string pad(150, 'x');
  SECTION("one dump of 10 000 threads: 500 locks, deep stacks, more frames than the flame graph keeps") {
    DumpText d;
    for (int l = 0; l < 500; ++l) {
      const auto a = "0x00000000c" + std::to_string(1000000 + l);
      const auto cls = "com.example." + pad + ".Lock" + std::to_string(l);
      d.holder("holder-" + pad + std::to_string(l), a, cls, "com.example.Busy" + pad + std::to_string(l) + ".work");
      for (int w = 0; w < 19; ++w) {
        // 100 distinct 40-frame call paths, 95 threads each: 4000 frames wide enough to draw.
        const auto t = std::to_string(l * 19 + w), path = std::to_string((l * 19 + w) % 100);
        std::vector<std::string> callers;
        for (int k = 0; k < 40; ++k)
          callers.push_back("com.example." + pad + ".Call" + std::to_string(k) + "$$Lambda$" + t + "/0x0000000800c0b440.run" + path);
        d.waiter("waiter-" + pad + t, a, cls, "com.example.Site" + std::to_string(l) + pad + ".get", "", "", callers);
      }
    }
    const auto html = analyze_html("big", d.str());
    INFO(html.size());
    CHECK(html.size() < 1'500'000);
    CHECK(html.find("<svg class=\"graph\"") != std::string::npos);
    CHECK(count_of(html, "<g class=\"frame\">") == view::Limits{}.flame_frames);
  }
  SECTION("600 dumps, a different hot lock in each") {
    std::string text;
    for (int s = 0; s < 600; ++s) {
      DumpText d;
      const auto cls = "com.example." + pad + ".Lock" + std::to_string(s);
      d.holder("holder-" + std::to_string(s), "0x00000000aa000001", cls, "com.example.Busy" + pad + ".work");
      for (int w = 0; w < 1 + s % 20; ++w) d.waiter("w-" + std::to_string(w), "0x00000000aa000001", cls, "com.example.Site" + pad + std::to_string(s) + ".get");
      text += d.str();
    }
    const auto html = analyze_html("long", text);
    INFO(html.size());
    CHECK(html.size() < 1'500'000);
    CHECK(count_of(html, "<polyline") == 9);  // every waiting thread + 8 locks, however many locks there were
    CHECK(html.find("600 dump(s)") != std::string::npos);
  }
}
