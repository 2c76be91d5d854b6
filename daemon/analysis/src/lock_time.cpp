// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/lock_time.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <string_view>
#include <tuple>

#include "lockwatch/analysis/pools.hpp"
#include "lockwatch/analysis/sites.hpp"

namespace lockwatch::analysis {
namespace {

// The first byte before the rest: most of these prefixes fail there, without a call to memcmp.
bool starts_with_any(std::string_view text, std::initializer_list<std::string_view> prefixes) noexcept {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) {
    return text.size() >= p.size() && (p.empty() || text.front() == p.front()) && text.starts_with(p);
  });
}

// Network JDBC drivers: a holder inside one waits for its database even when the socket
// frame below is not printed yet (result parsing, protocol buffers).
bool is_jdbc_driver_frame(std::string_view method) noexcept {
  return starts_with_any(method, {"com.mysql.", "org.postgresql.", "oracle.jdbc.", "com.microsoft.sqlserver.jdbc.",
                                  "org.mariadb.jdbc.", "com.ibm.db2.", "net.sourceforge.jtds.", "com.clickhouse.jdbc."});
}

bool is_sleep_frame(std::string_view method) noexcept {
  return starts_with_any(method, {"java.lang.Thread.sleep", "java.lang.Object.wait", "jdk.internal.misc.Unsafe.park",
                                  "sun.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park"});
}

double median(std::deque<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

std::string_view to_string(HolderActivity a) noexcept {
  switch (a) {
    case HolderActivity::running: return "running";
    case HolderActivity::io: return "io";
    case HolderActivity::waiting: return "waiting";
    case HolderActivity::sleeping: return "sleeping";
    case HolderActivity::unseen: return "unseen";
  }
  return "other";
}

// JDK 8-12 read sockets through java.net.Socket*Stream natives; JDK 13+ through NioSocketImpl
// (sun.nio.ch.Net.poll, SocketDispatcher); JDK 21+ files through UnixFileDispatcherImpl.
bool is_io_frame(std::string_view method) noexcept {
  return starts_with_any(method, {
      // sockets
      "java.net.SocketInputStream.socketRead", "java.net.SocketOutputStream.socketWrite",
      "java.net.PlainSocketImpl.socket", "java.net.DualStackPlainSocketImpl.", "java.net.PlainDatagramSocketImpl.",
      "sun.nio.ch.SocketDispatcher.", "sun.nio.ch.NioSocketImpl.", "sun.nio.ch.Net.poll", "sun.nio.ch.Net.accept",
      "sun.nio.ch.Net.connect", "sun.nio.ch.SocketChannelImpl.", "sun.nio.ch.DatagramChannelImpl.",
      "sun.nio.ch.DatagramDispatcher.", "sun.security.ssl.SSLSocketImpl$AppInputStream.read",
      "sun.security.ssl.SSLSocketOutputRecord.", "sun.security.ssl.SSLSocketInputRecord.",
      // files
      "java.io.FileInputStream.read", "java.io.FileOutputStream.write", "java.io.RandomAccessFile.read",
      "java.io.RandomAccessFile.write", "java.io.RandomAccessFile.seek", "java.io.FileDescriptor.sync",
      "java.io.UnixFileSystem.", "java.io.WinNTFileSystem.", "sun.nio.ch.FileDispatcherImpl.",
      "sun.nio.ch.UnixFileDispatcherImpl.", "sun.nio.ch.FileChannelImpl.", "sun.nio.fs.UnixNativeDispatcher."});
}

bool in_io(const model::ThreadInfo& thread) noexcept {
  for (const auto& f : thread.frames) {
    const auto method = model::frame_method(f.text);
    if (is_io_frame(method)) return true;
    if (!is_jdk_frame(method) && !is_lock_plumbing(method)) return is_jdbc_driver_frame(method);
  }
  return false;
}

// Order matters: a holder that waits for another lock is "waiting" whatever its frames; one
// parked, sleeping or in Object.wait is "sleeping"; I/O frames at the top are "io" even when
// its CPU advanced (copying buffers); otherwise it runs. A RUNNABLE thread in a native frame
// whose cpu= did not move is off CPU in a system call: io.
HolderActivity classify_holder(const model::ThreadInfo& t, bool waits_itself, std::optional<double> cpu_delta_ms) noexcept {
  using enum model::ThreadState;
  // A holder printed BLOCKED without waiting in the graph has just taken the lock: not waiting.
  if (waits_itself) return HolderActivity::waiting;
  if (t.state == waiting || t.state == timed_waiting) return HolderActivity::sleeping;
  const bool top_sleeps = !t.frames.empty() && is_sleep_frame(model::frame_method(t.frames.front().text));
  if (t.state == none && top_sleeps) return HolderActivity::sleeping;  // JDK 21-24 JSON: no state
  if (in_io(t)) return HolderActivity::io;
  const bool native_top = !t.frames.empty() && t.frames.front().text.find("Native Method") != std::string_view::npos;
  if (cpu_delta_ms && *cpu_delta_ms <= 0 && native_top) return HolderActivity::io;
  return HolderActivity::running;
}

std::string thread_identity(const model::ThreadInfo& t) {
  return t.java_id ? "#" + std::to_string(*t.java_id) : std::string(t.name);
}

// The gap to the previous sample, bounded: a sampler that stalled (a paused process, a slow
// dump) must not make one observation stand for minutes.
double LockTime::weight_for(double time_s) {
  if (!last_time_) return last_time_ = time_s, 0.0;
  const double gap = time_s - *last_time_;
  last_time_ = time_s;
  if (!(gap > 0)) return 0.0;
  const double typical = gaps_.empty() ? gap : median(gaps_);
  gaps_.push_back(gap);
  while (gaps_.size() > std::max<std::size_t>(options_.weight.recent_gaps, 1)) gaps_.pop_front();
  return std::min({gap, options_.weight.gap_factor * typical, options_.weight.max_weight_s});
}

// Text dumps print addresses, which a GC may move: trusted only when the GC count did not
// change. JSON dumps print identity hashes, which survive a GC. Across forms nothing matches.
bool LockTime::addresses_trusted(const model::ThreadDump& dump, std::optional<std::int64_t> gc_epoch) {
  const bool same_form = last_format_ == dump.format;
  bool trusted = false;
  if (same_form && dump.format == model::DumpFormat::dump_to_file_json) trusted = true;
  else if (same_form && gc_epoch && last_epoch_) trusted = *gc_epoch == *last_epoch_;
  if (last_format_ && !trusted) {
    if (gc_epoch && last_epoch_) ++totals_.gc_breaks;
    else ++totals_.unknown_epochs;
  }
  last_format_ = dump.format;
  last_epoch_ = gc_epoch;
  return trusted;
}

std::vector<std::pair<double, bool>> LockTime::track_holds(const model::ThreadDump& dump, const LockGraph& graph,
                                                           double time_s, bool trusted, LockTimeSample& out) {
  std::vector<bool> contended(graph.held.size(), false);
  for (const auto& w : graph.waits)
    if (w.held && *w.held < contended.size()) contended[*w.held] = true;
  std::map<RunKey, Run> runs;
  std::vector<std::pair<double, bool>> hold_s(graph.held.size(), {0.0, false});
  for (std::size_t i = 0; i < graph.held.size(); ++i) {
    const auto& h = graph.held[i];
    const auto& t = dump.threads[h.thread];
    RunKey key{thread_identity(t), h.kind, std::string(h.lock_class), std::string(h.site)};
    Run run{h.address, time_s, 1, false};
    if (auto prev = runs_.find(key); prev != runs_.end() && (!trusted || prev->second.address == h.address))
      run = {h.address, prev->second.start, prev->second.samples + 1, prev->second.by_key || !trusted};
    hold_s[i] = {time_s - run.start, run.by_key};
    if (contended[i])
      out.holds.push_back({{h.kind, std::string(h.lock_class), std::string(h.site)}, std::string(t.name),
                           time_s - run.start, run.samples, run.by_key});
    runs.try_emplace(std::move(key), run);
  }
  runs_ = std::move(runs);
  std::stable_sort(out.holds.begin(), out.holds.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  for (const auto& h : out.holds) {
    auto [it, added] = longest_.try_emplace(h.key, h);
    if (!added && h.seconds > it->second.seconds) it->second = h;
  }
  return hold_s;
}

namespace {

// "#<digits>" as std::to_string spells a number: a thread without an #id but with such a name
// has the identity of the thread with that #id (thread_identity() makes the same string).
std::optional<std::uint64_t> id_spelled_by(std::string_view name) {
  if (name.size() < 2 || name.front() != '#' || (name[1] == '0' && name.size() > 2)) return std::nullopt;
  std::uint64_t id = 0;
  const char* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(name.data() + 1, end, id);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return id;
}

std::optional<std::uint64_t> numeric_identity(const model::ThreadInfo& t) {
  return t.java_id ? t.java_id : id_spelled_by(t.name);
}

// Sorted by key; of equal keys only the last put stays (as a map's operator[] would keep it).
template <class Entry>
void keep_last_of_each(std::vector<Entry>& v) {
  // Threads are listed in #id order as a rule: then there is nothing to sort or drop.
  if (std::adjacent_find(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return !(a.first < b.first); }) == v.end()) return;
  std::stable_sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return a.first < b.first; });
  auto out = v.begin();
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (std::next(it) != v.end() && std::next(it)->first == it->first) continue;
    if (out != it) *out = std::move(*it);  // never onto itself: a moved-onto-itself string may empty
    ++out;
  }
  v.erase(out, v.end());
}

}  // namespace

void LockTime::PerThread::put(const model::ThreadInfo& t, double value) {
  if (const auto id = numeric_identity(t)) by_id_.emplace_back(*id, value);
  else by_name_.emplace_back(std::string(t.name), value);
}

void LockTime::PerThread::seal() {
  keep_last_of_each(by_id_);
  keep_last_of_each(by_name_);
}

const double* LockTime::PerThread::find(const model::ThreadInfo& t) const {
  if (const auto id = numeric_identity(t)) {
    auto it = std::lower_bound(by_id_.begin(), by_id_.end(), *id, [](const auto& e, std::uint64_t k) { return e.first < k; });
    return it != by_id_.end() && it->first == *id ? &it->second : nullptr;
  }
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), t.name,
                             [](const auto& e, std::string_view k) { return std::string_view(e.first) < k; });
  return it != by_name_.end() && it->first == t.name ? &it->second : nullptr;
}

const double* LockTime::PerThread::find(const model::ThreadInfo& t, std::size_t& next) const {
  const auto id = numeric_identity(t);
  if (!id) return find(t);
  if (next < by_id_.size() && by_id_[next].first == *id) return &by_id_[next++].second;
  auto it = std::lower_bound(by_id_.begin(), by_id_.end(), *id, [](const auto& e, std::uint64_t k) { return e.first < k; });
  if (it == by_id_.end() || it->first != *id) return nullptr;
  next = static_cast<std::size_t>(it - by_id_.begin()) + 1;
  return &it->second;
}

// Per thread, the cpu= advance since the last sample that printed it. A thread not in that
// sample counts with all its CPU only when its elapsed= says it was born since.
LockTime::PerThread LockTime::cpu_deltas(const model::ThreadDump& dump, LockTimeSample& out) {
  PerThread now, delta;
  now.reserve(dump.threads.size());
  for (const auto& t : dump.threads)
    if (t.cpu_ms) now.put(t, *t.cpu_ms);
  now.seal();
  out.cpu_printed = !now.empty();
  if (now.empty()) return delta;
  const double gap = gaps_.empty() ? 0.0 : gaps_.back();
  PoolNamer namer;
  bool last_pooled = false;  // the last entry taken was a pool's (not a name outside one)
  auto pool_cpu = out.pool_cpu_seconds.end();
  delta.reserve(dump.threads.size());
  std::size_t next = 0;  // where the last sample's entry of the next thread should be
  for (const auto& t : dump.threads) {
    if (!t.cpu_ms) continue;
    std::optional<double> d;
    if (const double* prev = last_cpu_ms_.find(t, next)) d = *t.cpu_ms - *prev;
    else if (seen_cpu_ && t.elapsed_s && *t.elapsed_s <= gap + 1.0) d = *t.cpu_ms;
    if (!d || *d < 0) continue;
    delta.put(t, *d);
    bool same = false;
    const std::string* pool = namer.pool(t.name, same);
    const std::string_view key = pool != nullptr ? std::string_view(*pool) : t.name;
    // A pool's members are listed mostly one after another: try the last entry first.
    const bool again = pool_cpu != out.pool_cpu_seconds.end() && (pool != nullptr && same && last_pooled ? true : pool_cpu->first == key);
    if (!again) pool_cpu = out.pool_cpu_seconds.try_emplace(std::string(key), 0.0).first;
    last_pooled = pool != nullptr;
    pool_cpu->second += *d / 1000.0;
  }
  delta.seal();
  last_cpu_ms_ = std::move(now);
  seen_cpu_ = true;
  return delta;
}

// One per held contended object per sample; a lock whose waiters have no holder in the dump
// counts once as unseen. Resources have no holder and are left out.
void LockTime::count_activity(const model::ThreadDump& dump, const LockGraph& graph, const PerThread& cpu_delta,
                              LockTimeSample& out) {
  // By index, not in sets: a dump may show hundreds of waiting threads.
  std::vector<bool> waiting_threads(dump.threads.size(), false);
  for (const auto& w : graph.waits)
    if (w.thread < waiting_threads.size()) waiting_threads[w.thread] = true;
  std::vector<bool> counted_held(graph.held.size(), false);
  // Waits whose holder is not in the dump count once per lock object: collected, made unique, counted.
  std::vector<std::tuple<LockKind, std::string_view, std::string_view, std::uint64_t>> unseen;
  for (const auto& w : graph.waits) {
    if (w.kind == LockKind::resource) continue;
    if (!w.held || !w.holder) {
      // The waiters of one object come in runs: one entry per run before the sort.
      const auto u = std::tuple{w.kind, w.lock_class, w.site, w.address.value_or(0)};
      if (unseen.empty() || unseen.back() != u) unseen.push_back(u);
      continue;
    }
    if (counted_held[*w.held]) continue;
    counted_held[*w.held] = true;
    const auto& t = dump.threads[*w.holder];
    const double* d = cpu_delta.find(t);
    const bool waits_itself = *w.holder < waiting_threads.size() && waiting_threads[*w.holder];
    const auto a = classify_holder(t, waits_itself, d ? std::optional(*d) : std::nullopt);
    ++out.activity[{w.kind, std::string(w.lock_class), a}];
  }
  std::sort(unseen.begin(), unseen.end());
  unseen.erase(std::unique(unseen.begin(), unseen.end()), unseen.end());
  for (auto it = unseen.begin(); it != unseen.end();) {
    // Objects of one (kind, lock class) are adjacent: one map entry for the run.
    auto end = std::find_if(it, unseen.end(), [&](const auto& u) {
      return std::get<0>(u) != std::get<0>(*it) || std::get<1>(u) != std::get<1>(*it);
    });
    out.activity[{std::get<0>(*it), std::string(std::get<1>(*it)), HolderActivity::unseen}] += static_cast<std::uint32_t>(end - it);
    it = end;
  }
  for (const auto& [k, n] : out.activity) totals_.activity[k] += n;
}

// A tracked lock is held in a sample when its waiters found a holder, or, with no waiters,
// when its object (same address, within a GC epoch) or a holder at one of its holder sites
// (across an epoch) is seen holding a lock of its class.
void LockTime::occupancy(const LockGraph& graph, const WaitGroups& groups, const std::vector<std::pair<double, bool>>& hold_s,
                         double weight, bool trusted) {
  ++clock_;  // a tracked key whose last_used is the clock was seen in this sample
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const auto& first = graph.waits[groups.waits[groups.begin[k]]];
    if (first.kind == LockKind::resource) continue;
    LockKey key{first.kind, std::string(first.lock_class), std::string(first.site)};
    auto& tr = tracked_[key];
    tr.occ.key = std::move(key);
    tr.last_used = clock_;
    ++tr.occ.samples;
    bool held_now = false;
    for (auto i = groups.begin[k]; i < groups.begin[k + 1]; ++i) {
      const auto& w = graph.waits[groups.waits[i]];
      tr.occ.wait_seconds += weight;
      if (w.address) tr.address = *w.address;
      if (!w.held) continue;
      const auto& h = graph.held[*w.held];
      if (!held_now) held_now = true, ++tr.occ.held;
      if (std::find(tr.holder_sites.begin(), tr.holder_sites.end(), h.site) == tr.holder_sites.end() && tr.holder_sites.size() < 4)
        tr.holder_sites.emplace_back(h.site);
      if (hold_s[*w.held].first >= tr.occ.longest_hold_s)
        tr.occ.longest_hold_s = hold_s[*w.held].first, tr.occ.longest_by_key = hold_s[*w.held].second;
    }
  }
  for (auto& entry : tracked_) {
    // Named, not a structured binding: clang 14 (the fuzz build) cannot capture those.
    const auto& key = entry.first;
    auto& tr = entry.second;
    if (tr.last_used == clock_) continue;
    ++tr.occ.samples;
    const bool held = std::any_of(graph.held.begin(), graph.held.end(), [&](const Held& h) {
      if (h.kind != key.kind || h.lock_class != key.lock_class) return false;
      if (trusted && tr.address != 0) return h.address == tr.address;
      return std::find(tr.holder_sites.begin(), tr.holder_sites.end(), h.site) != tr.holder_sites.end();
    });
    if (held) ++tr.occ.held;
  }
  evict_tracked();
}

void LockTime::evict_tracked() {
  while (tracked_.size() > std::max<std::size_t>(options_.max_tracked_locks, 1)) {
    auto oldest = std::min_element(tracked_.begin(), tracked_.end(),
                                   [](const auto& a, const auto& b) { return a.second.last_used < b.second.last_used; });
    tracked_.erase(oldest);
  }
  while (longest_.size() > std::max<std::size_t>(options_.max_tracked_locks, 1)) {
    auto shortest = std::min_element(longest_.begin(), longest_.end(),
                                     [](const auto& a, const auto& b) { return a.second.seconds < b.second.seconds; });
    longest_.erase(shortest);
  }
}

LockTimeSample LockTime::add(const model::ThreadDump& dump, const LockGraph& graph, double time_s,
                             std::optional<std::int64_t> gc_epoch) {
  LockTimeSample out;
  out.weight_s = weight_for(time_s);
  const auto groups = group_waits_by_key(graph);
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const auto& w = graph.waits[groups.waits[groups.begin[k]]];
    auto& seconds = out.wait_seconds[{w.kind, std::string(w.lock_class), std::string(w.site)}];
    // One addition per waiting thread, as the figure is defined (not n * weight: the same
    // double either way only up to rounding).
    for (auto i = groups.begin[k]; i < groups.begin[k + 1]; ++i) seconds += out.weight_s;
  }
  const bool trusted = addresses_trusted(dump, gc_epoch);
  const auto hold_s = track_holds(dump, graph, time_s, trusted, out);
  const auto cpu = cpu_deltas(dump, out);
  count_activity(dump, graph, cpu, out);
  occupancy(graph, groups, hold_s, out.weight_s, trusted);
  totals_.weighted_seconds += out.weight_s;
  ++totals_.samples;
  return out;
}

LockTimeReport LockTime::report() const {
  LockTimeReport r = totals_;
  for (const auto& [key, tr] : tracked_) r.locks.push_back(tr.occ);
  std::stable_sort(r.locks.begin(), r.locks.end(), [](const auto& a, const auto& b) { return a.wait_seconds > b.wait_seconds; });
  for (const auto& [key, h] : longest_) r.longest_holds.push_back(h);
  std::stable_sort(r.longest_holds.begin(), r.longest_holds.end(),
                   [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  return r;
}

std::vector<ThreadCpu> top_cpu_threads(const model::ThreadDump& first, const model::ThreadDump& last, double gap_s,
                                       std::size_t limit, std::size_t frames) {
  std::map<std::string, double> before;
  for (const auto& t : first.threads)
    if (t.cpu_ms) before[thread_identity(t)] = *t.cpu_ms;
  std::vector<ThreadCpu> out;
  if (before.empty()) return out;
  for (const auto& t : last.threads) {
    if (!t.cpu_ms) continue;
    const auto prev = before.find(thread_identity(t));
    const bool born_since = prev == before.end() && t.elapsed_s && *t.elapsed_s <= gap_s + 1.0;
    if (prev == before.end() && !born_since) continue;
    const double ms = *t.cpu_ms - (prev == before.end() ? 0.0 : prev->second);
    if (ms < 0) continue;
    ThreadCpu c{std::string(t.name), t.java_id, pool_of(t.name).value_or(""), ms / 1000.0,
                std::string(model::to_string(t.state)), {}};
    for (std::size_t i = 0; i < t.frames.size() && i < frames; ++i) c.top_frames.emplace_back(t.frames[i].text);
    out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.cpu_seconds > b.cpu_seconds; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

namespace {

std::optional<int> field(std::string_view text, std::size_t at, std::size_t len) noexcept {
  if (at + len > text.size()) return std::nullopt;
  int v = 0;
  auto [ptr, ec] = std::from_chars(text.data() + at, text.data() + at + len, v);
  return ec == std::errc{} && ptr == text.data() + at + len ? std::optional(v) : std::nullopt;
}

// Days since 1970-01-01 of a civil date (proleptic Gregorian).
long long days_from_civil(int y, int m, int d) noexcept {
  y -= m <= 2 ? 1 : 0;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<long long>(era) * 146097 + doe - 719468;
}

}  // namespace

std::optional<double> parse_dump_timestamp(std::string_view text) noexcept {
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' || text[13] != ':' || text[16] != ':')
    return std::nullopt;
  const auto y = field(text, 0, 4), mo = field(text, 5, 2), d = field(text, 8, 2);
  const auto h = field(text, 11, 2), mi = field(text, 14, 2), s = field(text, 17, 2);
  if (!y || !mo || !d || !h || !mi || !s || *mo < 1 || *mo > 12 || *d < 1 || *d > 31) return std::nullopt;
  return static_cast<double>(days_from_civil(*y, *mo, *d) * 86400 + *h * 3600 + *mi * 60 + *s);
}

}  // namespace lockwatch::analysis
