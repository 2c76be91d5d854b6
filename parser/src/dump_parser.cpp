// SPDX-License-Identifier: Apache-2.0
// The state machine: classified lines in, ThreadDumps out.
#include "lockwatch/parser/dump_parser.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "body_cache_impl.hpp"
#include "dump_to_file_json.hpp"
#include "line_kind.hpp"
#include "lock_line.hpp"
#include "text_input.hpp"
#include "thread_header.hpp"

namespace lockwatch::parser {

using detail::LineKind;
using model::ThreadDump;
using model::ThreadInfo;

namespace {

enum class Mode : std::uint8_t {
  outside,          // no dump open: junk, prompts, status lines
  threads,          // between thread blocks
  thread,           // inside a thread block
  orphan,           // the body of a thread whose header could not be read: not anyone's
  synchronizers,    // under "Locked ownable synchronizers:"
  smr,              // inside "Threads class SMR info:" { ... }
  trailer,          // after the JNI line
  deadlock_summary, // "Found one Java-level deadlock:" ... the wait descriptions
  deadlock_stacks,  // "Java stack information ...": repeats stacks; never new threads
  heap,             // SIGQUIT "Heap" summary or a class histogram
};

// A name holding '\n' splits a header over several lines; this bounds the join.
constexpr std::size_t max_header_lines = 16;

bool is_body_kind(LineKind kind) {
  switch (kind) {
    case LineKind::blank: case LineKind::thread_state: case LineKind::carrying:
    case LineKind::mounted: case LineKind::compile_task: case LineKind::frame:
    case LineKind::lock: case LineKind::owned_header: case LineKind::jni:
    case LineKind::dump_header:
      return true;
    default:
      return false;
  }
}

std::string join_lines(const std::vector<std::string>& lines, std::string_view last) {
  std::string joined;
  for (const auto& l : lines) joined.append(l).push_back('\n');
  joined.append(last);
  return joined;
}

// "BLOCKED (on object monitor)" -> state BLOCKED, detail "on object monitor".
std::string_view state_detail(std::string_view body, ThreadInfo& t) {
  const auto space = body.find(' ');
  t.state = model::parse_thread_state(body.substr(0, space));
  if (space == std::string_view::npos) return {};
  auto detail = body.substr(space + 1);
  if (!detail.empty() && detail.front() == '(') detail.remove_prefix(1);
  if (!detail.empty() && detail.back() == ')') detail.remove_suffix(1);
  return detail;
}

// The lines a cached body may hold (BodyCache): those that only add to the thread above,
// whatever came before them in its block. A blank line ends the body.
bool is_plain_body_line(LineKind kind) {
  switch (kind) {
    case LineKind::thread_state: case LineKind::carrying: case LineKind::mounted:
    case LineKind::compile_task: case LineKind::frame: case LineKind::lock:
      return true;
    default:
      return false;
  }
}

// What body lines set on a thread: the part a cached body carries.
void copy_body(const ThreadInfo& from, ThreadInfo& to) {
  to.state = from.state;
  to.state_detail = from.state_detail;
  to.carrying_vthread = from.carrying_vthread;
  to.mounted_frames_begin = from.mounted_frames_begin;
  to.frames = from.frames;
  to.locks = from.locks;
  to.notes = from.notes;
}

template <class T>
std::span<const T> view(const std::vector<T>& items) {
  return {items.data(), items.size()};
}

std::uint64_t next_body_id() {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

// The #ids of the open dump: one insert per thread of every dump, cleared with each dump.
// Open addressing with a generation per slot, so neither an insert nor a clear allocates
// (a node-based set took a node per thread).
class IdSet {
 public:
  /// False when `id` is in the set already.
  bool insert(std::uint64_t id) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    for (std::size_t i = slot_of(id);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& slot = slots_[i];
      if (slot.generation != generation_) {
        slot = {id, generation_};
        ++size_;
        return true;
      }
      if (slot.id == id) return false;
    }
  }

  void clear() {
    size_ = 0;
    if (++generation_ != 0) return;
    for (auto& slot : slots_) slot.generation = 0;  // the counter wrapped: forget every slot
    generation_ = 1;
  }

 private:
  struct Slot {
    std::uint64_t id = 0;
    std::uint32_t generation = 0;  // the slot holds an id of this set only when it equals generation_
  };

  std::size_t slot_of(std::uint64_t id) const {
    const std::uint64_t h = (id ^ (id >> 31)) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h >> 32) & (slots_.size() - 1);
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
    const std::uint32_t live = generation_;
    generation_ = 1;
    size_ = 0;
    for (const auto& slot : old)
      if (slot.generation == live) insert(slot.id);
  }

  std::vector<Slot> slots_;
  std::uint32_t generation_ = 1;
  std::size_t size_ = 0;
};

}  // namespace

struct DumpParser::Impl {
  Impl(ParserLimits l, std::shared_ptr<BodyCache> c) : limits(l), splitter(l.max_line_bytes), cache(std::move(c)) {
    if (cache) bodies = cache->impl_.get(), bodies->use_limits(limits);
  }

  ParserLimits limits;
  ParseStats stats;
  detail::Transcoder transcoder;
  detail::LineSplitter splitter;
  std::string decoded;
  std::size_t consumed = 0;           // input bytes accepted (at most max_total_bytes)
  std::vector<ThreadDump> done;
  std::optional<ThreadDump> dump;
  Mode mode = Mode::outside;
  bool tentative = false;             // the current thread's header may continue on the next line
  std::string header_raw;             // that header's text so far
  std::vector<std::string> pending;   // lines of a header not yet complete
  std::string pending_timestamp;
  IdSet java_ids;                     // #ids of the open dump
  enum class Input : std::uint8_t { undecided, text, json } input = Input::undecided;
  std::string json;                   // a dump_to_file JSON document is parsed whole at finish()

  // The body cache (BodyCache): after a thread's header, the bytes that follow are compared
  // with the body that thread had in the last dump (`match`); while they are not known to be
  // one, the lines of a body that may be cached are held (`held_body`) and parsed when it ends.
  std::shared_ptr<BodyCache> cache;
  BodyCache::Impl* bodies = nullptr;
  struct Match {
    std::shared_ptr<ParsedBody> body;
    std::size_t at = 0;  // bytes of its text matched so far
  };
  std::shared_ptr<ParsedBody> match_next;  // a header asked for a match: it starts after the header line
  std::optional<Match> match;
  std::optional<std::uint64_t> body_key;   // the open thread's key while its body may be cached
  std::string held_body;                   // that body's lines so far, each with its '\n'
  std::string_view stable;                 // text that outlives the dump: views into it are kept as they are
  // The header just read (read_header), and when it was refit against a thread of the last
  // dump, that thread and the header's own layout. Kept here: a header is read for every
  // thread of every dump, and these are a few hundred bytes.
  std::optional<detail::HeaderFields> header_read;
  struct Refit {
    const BodyCache::Impl::Listed* last = nullptr;
    detail::HeaderLayout layout;
    std::uint64_t dump = 0;  // the dump it was read in
  } refit;

  // The open thread's lists as they grow, copied into the dump's arena as one array each
  // when the next thread starts or the dump closes (seal_thread): no vector per thread. While
  // `body_open` is false the thread's frames, locks and notes are a cached body's; a line that
  // adds to them after all (a stray line past the body's blank line) copies them here first,
  // and the thread then has a body of its own (body_id 0).
  std::vector<model::Frame> open_frames;
  std::vector<model::LockRef> open_locks;
  std::vector<std::string_view> open_notes;
  std::vector<model::OwnedSynchronizer> open_owned;
  bool body_open = false;

  // Input past max_total_bytes is dropped but what came before is still read to the
  // end; the other limits halt reading at once.
  bool halted() const { return stats.stopped != StopReason::none && stats.stopped != StopReason::max_total_bytes; }
  ThreadInfo* current() { return dump && !dump->threads.empty() ? &dump->threads.back() : nullptr; }
  model::Arena& arena() { return *dump->arena; }
  // What a thread keeps of a line: a view of it when the line is a cached body's own text,
  // a copy in the dump's arena otherwise.
  std::string_view keep(std::string_view text) {
    const auto at = reinterpret_cast<std::uintptr_t>(text.data());
    const auto begin = reinterpret_cast<std::uintptr_t>(stable.data());
    if (!stable.empty() && at >= begin && at + text.size() <= begin + stable.size()) return text;
    return arena().store(text);
  }

  // ---- input ---------------------------------------------------------------------------

  void feed(std::string_view chunk) {
    stats.bytes += chunk.size();  // every byte offered, so the count does not depend on chunking
    if (halted()) return;
    const std::size_t room = limits.max_total_bytes - consumed;
    if (chunk.size() > room) {
      chunk = chunk.substr(0, room);
      stats.stopped = StopReason::max_total_bytes;
    }
    if (chunk.empty()) return;
    consumed += chunk.size();
    if (!transcoder.decided()) {
      // Only the bytes that decide the encoding go through the transcoder: a whole reply
      // fed at once (the daemon's case) is not copied before it is read.
      decoded.clear();
      chunk.remove_prefix(transcoder.feed_head(chunk, decoded));
      route(decoded);
      if (chunk.empty()) return;
    }
    if (transcoder.passthrough()) return route(chunk);  // the common case: no copy
    decoded.clear();
    transcoder.feed(chunk, decoded);
    route(decoded);
  }

  void finish() {
    decoded.clear();
    transcoder.finish(decoded);
    route(decoded);
    stats.encoding = transcoder.encoding();
    if (input == Input::json) {
      finish_json();
    } else {
      if (match) unmatch(0);  // the input ended inside a body that matched so far
      match_next.reset();
      splitter.finish([this](std::string_view line, bool cut) { on_line(line, cut); });
      release_held();
      flush_pending();
      close_dump();
    }
  }

  // Text or JSON is decided by the first non-blank byte, so any split decides the same way.
  void route(std::string_view text) {
    if (input == Input::undecided) {
      const auto first = text.find_first_not_of(" \t\r\n");
      if (first == std::string_view::npos) {
        json.append(text);
        return;
      }
      input = text[first] == '{' ? Input::json : Input::text;
      std::string held = std::move(json);
      json.clear();
      route(held);
    }
    if (input == Input::json) {
      json.append(text);
    } else {
      split(text);
    }
  }

  void split(std::string_view text) {
    while (!text.empty()) {
      if (match) {
        text = follow(text);
        continue;
      }
      const auto sink = [this](std::string_view line, bool cut) { on_line(line, cut); };
      text.remove_prefix(splitter.feed(text, sink, [this] { return match_next != nullptr; }));
      if (match_next) match = Match{std::move(match_next), 0};  // the splitter holds no line now
    }
  }

  // ---- cached bodies -------------------------------------------------------------------

  // Takes the bytes of `text` that equal the rest of the matched body, as many at once as it
  // holds; returns what is left. The whole body equal is that body; a difference makes what
  // matched so far go the ordinary way, as if it had come as lines.
  std::string_view follow(std::string_view text) {
    const std::string& want = match->body->text;
    const auto n = std::min(want.size() - match->at, text.size());
    const char* expected = want.data() + match->at;
    if (std::memcmp(expected, text.data(), n) == 0) {
      match->at += n;
      if (match->at == want.size()) take_matched();
      return text.substr(n);
    }
    const auto same = static_cast<std::size_t>(std::mismatch(expected, expected + n, text.data()).first - expected);
    unmatch(same);
    return text.substr(same);
  }

  void unmatch(std::size_t more) {
    const auto body = std::move(match->body);
    const auto upto = match->at + more;
    match.reset();
    splitter.feed(std::string_view(body->text).substr(0, upto), [this](std::string_view line, bool cut) { on_line(line, cut); });
  }

  void take_matched() {
    const auto body = std::move(match->body);
    match.reset();
    held_body.clear();
    ++bodies->reused;
    stats.lines += body->lines;
    dump->stats.lines += body->lines;
    use_body(body, *current());
  }

  // A cached body becomes the open thread's, as if its lines had been parsed here (they
  // are counted where they came).
  void use_body(const std::shared_ptr<ParsedBody>& body, ThreadInfo& t) {
    copy_body(body->fields, t);
    t.body_id = body->id;
    body_open = false;
    dump->stats.unknown_lines += body->unknown_lines;
    dump->stats.frames_dropped += body->frames_dropped;
    dump->stats.locks_dropped += body->locks_dropped;
    if (bodies->note(body)) dump->shared.push_back(body);  // once per dump
    body_key.reset();
    mode = Mode::threads;  // after its blank line
    tentative = false;
  }

  // A line of a body that may be cached is held until the body ends; true when it was taken.
  bool hold(std::string_view line, bool cut) {
    const LineKind kind = detail::classify(line).kind;
    if (cut || (kind != LineKind::blank && !is_plain_body_line(kind)) || (kind == LineKind::blank && held_body.empty())) {
      release_held();
      return false;
    }
    held_body.append(line).push_back('\n');
    if (dump) ++dump->stats.lines;
    if (kind == LineKind::blank) end_held();
    return true;
  }

  // The body is whole: it is parsed from its own text, which the cache keeps, or an equal
  // body another thread brought is taken.
  void end_held() {
    if (auto known = bodies->by_text(held_body)) {
      held_body.clear();
      return use_body(known, *current());
    }
    auto body = std::make_shared<ParsedBody>();
    body->text.assign(held_body);  // of its size; held_body keeps its buffer for the next body
    held_body.clear();
    ThreadInfo& t = *current();
    const auto before = dump->stats;
    stable = body->text;
    dispatch_lines(body->text);
    stable = {};
    body->lines = static_cast<std::uint32_t>(std::count(body->text.begin(), body->text.end(), '\n'));
    body->unknown_lines = static_cast<std::uint32_t>(dump->stats.unknown_lines - before.unknown_lines);
    body->frames_dropped = static_cast<std::uint32_t>(dump->stats.frames_dropped - before.frames_dropped);
    body->locks_dropped = static_cast<std::uint32_t>(dump->stats.locks_dropped - before.locks_dropped);
    // The lists move into the body, and the thread's are the body's from here on.
    body->frames = open_frames, body->locks = open_locks, body->notes = open_notes;
    open_frames.clear(), open_locks.clear(), open_notes.clear();
    t.frames = view(body->frames), t.locks = view(body->locks), t.notes = view(body->notes);
    body_open = false;
    copy_body(t, body->fields);
    body->id = next_body_id();
    t.body_id = body->id;
    bodies->add(body);
    bodies->note(body);
    dump->shared.push_back(body);
    body_key.reset();
  }

  // The held lines were no cacheable body after all: they are parsed as they came.
  void release_held() {
    body_key.reset();
    if (held_body.empty()) return;
    std::string lines = std::move(held_body);
    held_body.clear();
    dispatch_lines(lines);
  }

  void dispatch_lines(std::string_view text) {
    for (std::size_t at = 0; at < text.size();) {
      const auto nl = text.find('\n', at);
      dispatch(text.substr(at, nl - at));
      at = nl + 1;
    }
  }

  void finish_json() {
    dump.emplace();
    detail::parse_dump_to_file_json(json, *dump);
    json.clear();
    close_dump();
  }

  // ---- lines ---------------------------------------------------------------------------

  void on_line(std::string_view line, bool cut) {
    if (halted()) return;
    ++stats.lines;
    if (cut) ++stats.long_lines;
    if (body_key && hold(line, cut)) return;
    if (!pending.empty())
      continue_pending(line);
    else
      dispatch(line);
    if (dump) ++dump->stats.lines, dump->stats.long_lines += cut ? 1 : 0;
  }

  void dispatch(std::string_view line) {
    const detail::Line l = detail::classify(line);
    if (tentative && !is_body_kind(l.kind) && extend_header(line)) return;
    tentative = false;
    switch (l.kind) {
      case LineKind::blank: return on_blank();
      case LineKind::dump_header: return open_dump(true, model::DumpFormat::jstack, l.body);
      case LineKind::timestamp: return on_timestamp(line);
      case LineKind::quoted: return on_quoted(line);
      case LineKind::plain_header: return on_plain_header(line);
      case LineKind::thread_state: return with_body([&](ThreadInfo& t) { t.state_detail = keep(state_detail(l.body, t)); });
      case LineKind::carrying: return with_body([&](ThreadInfo& t) { t.carrying_vthread = detail::parse_uint(l.body); });
      case LineKind::mounted: return with_body([&](ThreadInfo& t) { on_mounted(t); });
      case LineKind::compile_task: return with_body([&](ThreadInfo&) { open_notes.push_back(keep(l.body)); });
      case LineKind::frame: return with_body([&](ThreadInfo&) { add_frame(l.body); });
      case LineKind::lock: return with_thread([&](ThreadInfo& t) { on_lock(t, l.body); });
      case LineKind::owned_header: return with_thread([&](ThreadInfo& t) { on_owned_header(t); });
      case LineKind::smr_header: return in_dump([&] { mode = Mode::smr; });
      case LineKind::jni: return in_dump([&] { on_jni(l.body); });
      case LineKind::deadlock_found: return in_dump([&] { dump->jvm_deadlocks.emplace_back(), mode = Mode::deadlock_summary; });
      case LineKind::deadlock_stacks: return in_dump([&] { mode = Mode::deadlock_stacks; });
      case LineKind::deadlock_footer: return in_dump([&] { mode = Mode::trailer; });
      case LineKind::heap: return in_dump([&] { mode = Mode::heap; });
      case LineKind::separator: case LineKind::indented: case LineKind::other:
        return on_other(l);
    }
  }

  // Runs `f` on the thread a body line belongs to; a line with no thread is counted.
  template <class F>
  void with_thread(F&& f) {
    if (mode == Mode::deadlock_stacks || mode == Mode::deadlock_summary) return;  // repeated stacks
    if (mode == Mode::orphan) return count_stray();  // never the thread above's state or locks
    ThreadInfo* t = current();
    const bool in_list = mode == Mode::thread || mode == Mode::synchronizers || mode == Mode::threads;
    if (t == nullptr || !in_list) return count_stray();
    if (mode == Mode::threads) mode = Mode::thread;  // a stack with a stray blank line inside
    f(*t);
  }

  // As with_thread, for lines that set what a body holds (BodyCache): a thread whose body is
  // a cached one gets lists of its own first.
  template <class F>
  void with_body(F&& f) {
    with_thread([&](ThreadInfo& t) {
      own_body(t);
      f(t);
    });
  }

  void own_body(ThreadInfo& t) {
    if (body_open) return;
    open_frames.assign(t.frames.begin(), t.frames.end());
    open_locks.assign(t.locks.begin(), t.locks.end());
    open_notes.assign(t.notes.begin(), t.notes.end());
    t.body_id = 0;
    body_open = true;
  }

  template <class F>
  void in_dump(F&& f) {
    if (!dump) return count_stray();
    f();
  }

  void count_stray() {
    if (dump && mode != Mode::outside && mode != Mode::trailer && mode != Mode::heap)
      ++dump->stats.unknown_lines;
    else
      ++stats.junk_lines;
  }

  void on_blank() {
    if (mode == Mode::thread || mode == Mode::synchronizers || mode == Mode::orphan) mode = Mode::threads;
    if (mode == Mode::heap) mode = Mode::trailer;
  }

  void on_timestamp(std::string_view line) {
    if (dump && mode != Mode::trailer && mode != Mode::heap && !dump->threads.empty()) {
      ++dump->stats.unknown_lines;
      return;
    }
    pending_timestamp.assign(line);
  }

  void on_other(const detail::Line& l) {
    if (mode == Mode::deadlock_summary || mode == Mode::deadlock_stacks || mode == Mode::smr ||
        mode == Mode::heap)
      return on_known_trailer_line(l);
    ThreadInfo* t = current();
    if (t && mode == Mode::thread && l.kind == LineKind::indented) {
      // dump_to_file plain (JDK 21-24) prints frames indented, without "at ".
      own_body(*t);
      if (dump->format == model::DumpFormat::dump_to_file_plain) return add_frame(l.body);
      open_notes.push_back(arena().store(l.body));
    }
    count_stray();
  }

  // SMR lists, deadlock descriptions, heap summaries and class histograms: known, not kept.
  void on_known_trailer_line(const detail::Line& l) {
    if (mode == Mode::smr && l.body == "}") mode = Mode::threads;
  }

  // ---- threads -------------------------------------------------------------------------

  void on_quoted(std::string_view line) {
    if (mode == Mode::deadlock_summary || mode == Mode::deadlock_stacks) return on_deadlock_name(line);
    const auto* header = read_header(line);
    if (header && (!dump || mode == Mode::trailer || mode == Mode::heap))
      open_dump(false, model::DumpFormat::jstack, {});  // stitched dumps without "Full thread dump"
    if (header) return start_thread(*header, line);
    if (dump && mode != Mode::trailer && mode != Mode::heap) {
      pending.emplace_back(line);  // maybe the first line of a name holding '\n'
      return;
    }
    count_stray();
  }

  void continue_pending(std::string_view line) {
    std::string joined = join_lines(pending, line);
    if (auto header = detail::parse_thread_header(joined)) {
      pending.clear();
      return start_thread(*header, joined);
    }
    if (pending.size() < max_header_lines && joined.size() <= limits.max_line_bytes) {
      pending.emplace_back(line);
      return;
    }
    auto lines = std::move(pending);
    pending.clear();
    lines.emplace_back(line);
    replay_after_failed_header(lines);
  }

  // The first line never became a header: count it, and what follows up to the next
  // blank line or header is the body of a thread that is not there - counted too, never
  // given to the thread above (which would take its state and lock lines).
  void replay_after_failed_header(const std::vector<std::string>& lines) {
    ++dump->stats.unknown_lines;
    tentative = false;
    mode = Mode::orphan;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      if (!pending.empty())
        continue_pending(lines[i]);
      else
        dispatch(lines[i]);
    }
  }

  void flush_pending() {
    if (pending.empty()) return;
    dump->stats.unknown_lines += pending.size();
    pending.clear();
  }

  // A Java thread's header followed by a line that is no body line: the name held '\n'.
  bool extend_header(std::string_view line) {
    std::string joined = header_raw + '\n' + std::string(line);
    auto header = detail::parse_thread_header(joined);
    if (!header) return false;
    if (bodies) bodies->unlist();  // listed with its first line only
    ThreadInfo& t = dump->threads.back();
    t = ThreadInfo{};
    open_thread();
    fill_thread(t, *header);
    header_raw = std::move(joined);
    return true;
  }

  // The open thread's lists become arrays in the dump's arena; the lists start empty again.
  void seal_thread() {
    if (dump && !dump->threads.empty()) {
      ThreadInfo& t = dump->threads.back();
      if (body_open) {
        t.frames = arena().copy(view(open_frames));
        t.locks = arena().copy(view(open_locks));
        t.notes = arena().copy(view(open_notes));
      }
      t.owned_synchronizers = arena().copy(view(open_owned));
    }
    open_thread();
    body_open = false;
  }

  void open_thread() {
    open_frames.clear(), open_locks.clear(), open_notes.clear(), open_owned.clear();
    body_open = true;
  }

  // Counts the entry about to be added, or stops parsing when it would pass a thread bound.
  bool room_for_thread() {
    if (dump->threads.size() >= limits.max_threads || stats.threads >= limits.max_stream_threads) {
      stats.stopped = StopReason::max_threads;
      return false;
    }
    ++stats.threads;
    return true;
  }

  void start_thread(const detail::HeaderFields& h, std::string_view raw) {
    // A dump lists each #id once: a repeat is the next dump of a collection pasted
    // without its "Full thread dump" line.
    if (h.java_id && !java_ids.insert(*h.java_id)) {
      open_dump(false, model::DumpFormat::jstack, {});
      java_ids.insert(*h.java_id);
    }
    if (!dump) return;  // a limit stopped parsing
    if (!room_for_thread()) return;
    seal_thread();
    fill_thread(dump->threads.emplace_back(), h);
    open_thread();
    mode = Mode::thread;
    // JDK 6+: a Java thread's header ends in "[0x..]"; VM threads (which may be listed
    // without blank lines between them) never continue on the next line.
    tentative = h.has_stack_bracket;
    if (tentative) header_raw.assign(raw);
    expect_body(dump->threads.back(), h, raw);
  }

  // A header is first compared with the one the last dump listed next (BodyCache): when it is
  // that thread's but for its times, only the times are read. Any other is parsed.
  const detail::HeaderFields* read_header(std::string_view line) {
    refit.last = nullptr;
    if (bodies && transcoder.passthrough()) {
      if (const auto* last = bodies->expected_thread()) {
        if (!header_read) header_read.emplace();
        if (detail::refit_thread_header(line, bodies->line_of(*last), last->layout, *header_read, refit.layout)) {
          refit.last = last, refit.dump = bodies->dump;
          ++bodies->expected;
          bodies->prefetch_expected();
          return &*header_read;
        }
      }
    }
    header_read = detail::parse_thread_header(line);
    return header_read ? &*header_read : nullptr;
  }

  // A cached body is for text read as it came (UTF-8) in the Thread.print form. The thread
  // is listed for the next dump's parser, and its body in the last dump is the one to compare
  // with: the thread its header refit, or the one of its key when the order broke.
  void expect_body(const ThreadInfo& t, const detail::HeaderFields& h, std::string_view raw) {
    if (!bodies || !transcoder.passthrough() || dump->format != model::DumpFormat::jstack) return;
    const bool refitted = refit.last != nullptr && refit.dump == bodies->dump;  // no dump opened since
    body_key = BodyCache::Impl::key_of(t);
    bodies->list(raw, refitted ? refit.layout : detail::layout_of(raw, h), body_key);
    const auto* last = refitted ? refit.last : body_key ? bodies->find(*body_key) : nullptr;
    refit.last = nullptr;
    if (!body_key) return;
    if (last && last->body) match_next = last->body;
  }

  void fill_thread(ThreadInfo& t, const detail::HeaderFields& h) {
    t.name = arena().store(h.name);
    t.java_id = h.java_id, t.os_tid = h.os_tid, t.nid = h.nid, t.tid = h.tid;
    t.daemon = h.daemon, t.prio = h.prio, t.os_prio = h.os_prio;
    t.cpu_ms = h.cpu_ms, t.elapsed_s = h.elapsed_s;
    t.header_status = arena().store(h.status);
    t.has_header_fields = true;
  }

  void on_plain_header(std::string_view line) {
    auto h = detail::parse_plain_header(line);
    if (!h) return count_stray();
    if (!dump || dump->format != model::DumpFormat::dump_to_file_plain || mode == Mode::trailer)
      open_dump(false, model::DumpFormat::dump_to_file_plain, {});
    if (!dump) return;
    if (!room_for_thread()) return;
    seal_thread();
    ThreadInfo& t = dump->threads.emplace_back();
    open_thread();
    t.name = arena().store(h->name);
    t.java_id = h->java_id;
    t.is_virtual = h->is_virtual;
    if (!h->status.empty()) t.state = model::parse_thread_state(h->status);  // JDK 25
    mode = Mode::thread;
    dump->stats.complete = true;  // this format has no end marker
  }

  void on_mounted(ThreadInfo& t) { t.mounted_frames_begin = static_cast<std::uint32_t>(open_frames.size()); }

  void add_frame(std::string_view text) {
    if (open_frames.size() >= limits.max_frames_per_thread) {
      ++dump->stats.frames_dropped;
      return;
    }
    open_frames.push_back({keep(text)});
  }

  void on_lock(ThreadInfo& t, std::string_view body) {
    // JDK 7/8/9-11 print "- eliminated <owner is scalar replaced> (a X)" without a newline.
    const auto glued = body.find("\tat ");
    const std::string_view text = body.substr(0, glued);
    if (mode == Mode::synchronizers) {
      on_owned_line(t, text);
    } else if (auto lock = detail::parse_lock_line(text)) {
      own_body(t);
      add_lock(*lock);
    } else {
      count_stray();
    }
    if (glued != std::string_view::npos) own_body(t), add_frame(body.substr(glued + 4));
  }

  bool room_for_lock(const ThreadInfo& t) {
    const auto locks = body_open ? open_locks.size() : t.locks.size();
    if (locks + open_owned.size() < limits.max_locks_per_thread) return true;
    ++dump->stats.locks_dropped;
    return false;
  }

  void add_lock(const detail::LockLine& lock) {
    if (!room_for_lock(*current())) return;
    const auto frame = open_frames.empty() ? 0 : open_frames.size() - 1;
    open_locks.push_back({lock.action, lock.address, keep(lock.class_name),
                       static_cast<std::uint32_t>(frame)});
  }

  void on_owned_header(ThreadInfo& t) {
    t.synchronizers_listed = true;
    dump->synchronizers_listed = true;
    mode = Mode::synchronizers;
  }

  void on_owned_line(ThreadInfo& t, std::string_view text) {
    auto owned = detail::parse_owned_line(text);
    if (!owned) return count_stray();
    if (!owned->none && room_for_lock(t)) open_owned.push_back({owned->address, arena().store(owned->class_name)});
  }

  // ---- trailer -------------------------------------------------------------------------

  void on_jni(std::string_view body) {
    // "JNI global refs: 4, weak refs: 0" (JDK 10+) / "JNI global references: 235"
    const auto colon = body.find(':');
    if (colon != std::string_view::npos) {
      auto digits = body.substr(colon + 1);
      while (!digits.empty() && digits.front() == ' ') digits.remove_prefix(1);
      dump->jni_global_refs = detail::parse_uint(digits.substr(0, digits.find(',')));
    }
    dump->stats.complete = true;
    mode = Mode::trailer;
  }

  void on_deadlock_name(std::string_view line) {
    // "\"Thread-1\":" names a thread of the cycle; in the stacks part it only repeats.
    if (mode != Mode::deadlock_summary || dump->jvm_deadlocks.empty()) return;
    if (line.size() < 3 || line.substr(line.size() - 2) != "\":") return;
    dump->jvm_deadlocks.back().threads.push_back(arena().store(line.substr(1, line.size() - 3)));
  }

  // ---- dumps ---------------------------------------------------------------------------

  void open_dump(bool has_header, model::DumpFormat format, std::string_view banner) {
    close_dump();
    if (halted()) return;
    dump.emplace();
    // A target's next dump lists about as many threads as its last: one allocation, not a
    // doubling vector copied at each step (a 1000-thread dump's list is ~300 KB).
    dump->threads.reserve(bodies ? std::max<std::size_t>(256, bodies->last.size() + bodies->last.size() / 8) : 256);
    java_ids.clear();
    if (bodies) bodies->begin_dump();
    dump->format = format;
    dump->stats.has_header = has_header;
    if (!banner.empty() && banner.front() == ' ') banner.remove_prefix(1);
    if (!banner.empty() && banner.back() == ':') banner.remove_suffix(1);
    dump->vm_banner = arena().store(banner);
    dump->timestamp = arena().store(pending_timestamp);
    pending_timestamp.clear();
    mode = Mode::threads;
  }

  void close_dump() {
    tentative = false;
    if (!dump) return;
    flush_pending();
    if (!dump->stats.complete) {
      ++stats.incomplete_dumps;
      if (!dump->threads.empty() && (mode == Mode::thread || mode == Mode::synchronizers))
        dump->threads.back().truncated = true;
    }
    seal_thread();
    if (bodies) bodies->end_dump();
    done.push_back(std::move(*dump));
    dump.reset();
    mode = Mode::outside;
    if (++stats.dumps >= limits.max_dumps) stats.stopped = StopReason::max_dumps;
  }
};

DumpParser::DumpParser(ParserLimits limits, std::shared_ptr<BodyCache> bodies)
    : impl_(std::make_unique<Impl>(limits, std::move(bodies))) {}
DumpParser::~DumpParser() = default;
DumpParser::DumpParser(DumpParser&&) noexcept = default;
DumpParser& DumpParser::operator=(DumpParser&&) noexcept = default;

void DumpParser::feed(std::string_view chunk) { impl_->feed(chunk); }
void DumpParser::finish() { impl_->finish(); }
const ParseStats& DumpParser::stats() const noexcept { return impl_->stats; }
bool DumpParser::dump_begun() const noexcept { return impl_->dump.has_value() || impl_->stats.dumps > 0; }

std::vector<ThreadDump> DumpParser::take_dumps() {
  auto out = std::move(impl_->done);
  impl_->done.clear();
  return out;
}

std::vector<ThreadDump> parse_dumps(std::string_view text, ParserLimits limits, ParseStats* stats) {
  DumpParser parser(limits);
  parser.feed(text);
  parser.finish();
  if (stats != nullptr) *stats = parser.stats();
  return parser.take_dumps();
}

}  // namespace lockwatch::parser
