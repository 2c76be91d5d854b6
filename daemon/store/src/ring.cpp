// SPDX-License-Identifier: Apache-2.0
// Samples as lists of interned blocks (a thread's lines up to a blank line); a block is a
// list of interned lines; thread headers are stored as templates plus their numbers.
#include "lockwatch/store/ring.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "header_numbers.hpp"
#include "lockwatch/store/intern_pool.hpp"

namespace lockwatch::store {
namespace {

using Id = std::uint32_t;
using Shape = std::vector<Id>;
constexpr Id template_bit = 0x8000'0000u;  // the line is a header template: numbers follow
// What a hash node, its bucket and the pool's entry cost besides the value itself.
constexpr std::uint64_t entry_overhead = 80;

struct ShapeHash {
  std::size_t operator()(const Shape& s) const noexcept {
    std::size_t h = 1469598103934665603ull;
    for (Id id : s) h = (h ^ id) * 1099511628211ull;
    return h;
  }
};

struct Stored {
  SampleInfo info;
  std::vector<Id> blocks;  // shape ids
  std::string numbers;     // varints cut out of the headers, in order
  bool final_newline = true;
  std::uint64_t bytes = 0;
};

std::uint64_t bytes_of(const Stored& s) {
  return sizeof(Stored) + s.blocks.capacity() * sizeof(Id) + s.numbers.capacity() + s.info.dump.error.capacity();
}

bool is_blank(std::string_view line) { return line.empty() || line == "\r"; }

// A block the writer saw, for the ring to remember at commit: `body` is its text after the
// header, or, when it matched the remembered one, `matched` holds a reference to that body.
struct Seen {
  Id header = 0;
  Id shape = 0;
  std::string body;
  std::optional<Id> matched;
};

}  // namespace

struct Ring::Impl {
  RingLimits limits;
  InternPool<std::string, StringHash> lines;
  InternPool<Shape, ShapeHash> shapes;
  std::deque<Stored> samples;
  std::uint64_t next_id = 1;
  std::uint64_t pool_bytes = 0;
  std::uint64_t sample_bytes = 0;
  std::uint64_t evictions = 0;
  std::uint64_t refused = 0;

  // Each thread's block in the last committed sample, by its header line (a template when it
  // had numbers: name, #id, tid, nid and state, the changing numbers cut out), with the text of
  // the lines after the header. Most threads have the same stack in the next dump: their block
  // is then compared with this text byte by byte as it streams in and takes the remembered
  // shape, instead of every line being hashed and found in the pool again (that was a third of
  // a sample's CPU). Entries not seen in the latest commit are dropped, so this holds one
  // sample's threads; bodies are interned, so threads with the same stack share one copy.
  // Counted in bytes().
  struct Previous {
    Id body = 0;   // in `bodies`
    Id shape = 0;  // holds a reference, so the shape (and its lines) outlive eviction
    std::uint64_t commit = 0;
    std::size_t order_at = 0;  // its place in `order`
    // The pooled texts of the header line and the body, which the references above keep.
    std::string_view header_text, body_text;
  };
  std::unordered_map<Id, Previous> previous;  // by header line id
  // The last sample's threads in the order it listed them, which the next dump mostly keeps:
  // a header is compared with the one expected next before any hashing.
  // Each carries its header's and body's text: the pools keep them each in a heap block of
  // its own, which the next sample would otherwise reach through two more scattered lookups.
  struct Expected {
    Id header = 0, body = 0, shape = 0;
    std::string_view header_text, body_text;
  };
  std::vector<Expected> order;
  // The order's header texts, one after another, which its entries view (counted in
  // previous_bytes). Why: a sample starts after the machine ran other work, and each pooled
  // header sat in a heap block of its own, so each thread's first compare waited on memory
  // (the ring's share of a sample's CPU doubled after the daemon's 200 ms pause). Read in
  // order, they stream. Rebuilt only when the order's headers change.
  std::string order_text;
  std::vector<Expected> last_order;  // remember()'s: the order before the commit
  InternPool<std::string, StringHash> bodies;
  std::uint64_t previous_bytes = 0;

  // Blocks that differ from their thread's last one are mostly blocks the ring holds already
  // (a request thread back at a stack it had before): by a hash of the block - its first
  // line's id and the text of its other lines - the shape that stores it, compared line by
  // line before it is taken. One hash of the block's text, where each of its lines would be
  // hashed and found in the pool. An entry lives as long as its shape and is counted in the
  // pool's bytes.
  std::unordered_map<std::uint64_t, Id> known_blocks;
  std::vector<std::uint64_t> known_key;  // by shape id: its key in known_blocks, 0 for none
  // A known block's hash node, bucket and known_key slot.
  static constexpr std::uint64_t known_block_bytes = 48;
  std::uint64_t commits = 0;
  std::uint64_t reused_blocks = 0;
  std::uint64_t found_blocks = 0;

  Id acquire_line(std::string_view text) {
    const auto before = lines.size();
    const auto size = text.size();
    const Id id = lines.acquire(text);
    if (lines.size() > before) pool_bytes += size + entry_overhead;
    return id;
  }

  void release_line(Id id) {
    const auto size = lines.get(id & ~template_bit).size();
    if (lines.release(id & ~template_bit)) pool_bytes -= size + entry_overhead;
  }

  // A shape owns one reference to each of its lines; a shape seen before already does.
  // `key`: the block's key when the caller hashed it already (a held block's text).
  Id acquire_shape(const Shape& shape, std::optional<std::uint64_t> key = std::nullopt) {
    const auto before = shapes.size();
    const Id id = shapes.acquire(shape);
    if (shapes.size() > before) {
      pool_bytes += shape.size() * sizeof(Id) + entry_overhead;
      if (key) know_block(*key, id);
      else know_new(id, shape);
    } else {
      for (Id line : shape) release_line(line);
    }
    return id;
  }

  // The key a block is looked up by in known_blocks: its first line's id and the text of its
  // other lines, each with its '\n'.
  static std::uint64_t block_key(Id first, std::string_view rest) {
    const std::uint64_t h = std::hash<std::string_view>{}(rest) * 0x9E3779B97F4A7C15ull ^ first;
    return h == 0 ? 1 : h;  // 0 is known_key's "none"
  }

  // Every new shape of a block that could be looked up whole (more lines than its first, none
  // of them header-like) is known, whichever way its block came in - held, compared with the
  // last sample's, or the text's last - so which blocks are known depends on the shapes the
  // ring holds, never on the order the samples came in (a ring cut to one sample costs what
  // that sample alone costs).
  void know_new(Id id, const Shape& shape) {
    if (shape.size() < 2) return;
    key_text.clear();
    for (std::size_t i = 1; i < shape.size(); ++i) {
      if (shape[i] & template_bit) return;
      key_text.append(lines.get(shape[i])).push_back('\n');
    }
    know_block(block_key(shape.front(), key_text), id);
  }
  std::string key_text;  // know_new's buffer

  void release_shape(Id id) {
    // Most releases only count down (an evicted sample's blocks are the next sample's too);
    // the shape is copied only when this is its last reference and release() frees it.
    if (!shapes.last_ref(id)) return void(shapes.release(id));
    const Shape shape = shapes.get(id);
    shapes.release(id);
    pool_bytes -= shape.size() * sizeof(Id) + entry_overhead;
    for (Id line : shape) release_line(line);
    if (id < known_key.size() && known_key[id] != 0) {
      known_blocks.erase(known_key[id]);
      known_key[id] = 0;
      pool_bytes -= known_block_bytes;
    }
  }

  // The shape (a reference the caller holds) stores the block of hash `key`; a shape already
  // known, or a key taken by another block (a collision), stays as it is.
  void know_block(std::uint64_t key, Id shape) {
    if ((shape < known_key.size() && known_key[shape] != 0) || !known_blocks.try_emplace(key, shape).second) return;
    if (known_key.size() <= shape) known_key.resize(shape + 1, 0);
    known_key[shape] = key;
    pool_bytes += known_block_bytes;
  }

  // Whether `shape` is the block of first line `first` and further lines `rest` (each with
  // its '\n').
  bool stores(Id shape, Id first, std::string_view rest) const {
    const Shape& lines_of = shapes.get(shape);
    if (lines_of.empty() || lines_of.front() != first) return false;
    std::size_t at = 0;
    for (std::size_t i = 1; i < lines_of.size(); ++i) {
      if (lines_of[i] & template_bit) return false;
      const std::string& text = lines.get(lines_of[i]);
      if (rest.compare(at, text.size(), text) != 0 || at + text.size() >= rest.size() || rest[at + text.size()] != '\n')
        return false;
      at += text.size() + 1;
    }
    return at == rest.size();
  }

  Id line_id(std::string_view line, std::string& numbers) {
    if (detail::cut_numbers(line, tmpl, numbers)) return acquire_line(tmpl) | template_bit;
    return acquire_line(line);
  }
  std::string tmpl;  // line_id's buffer, kept: a header line is cut on every thread of every dump

  void release(const Stored& s, const Shape& open_block) {
    for (Id block : s.blocks) release_shape(block);
    for (Id line : open_block) release_line(line);
  }

  Id acquire_body(std::string_view text) {
    const auto before = bodies.size();
    const Id id = bodies.acquire(text);
    if (bodies.size() > before) previous_bytes += text.size() + entry_overhead;
    return id;
  }

  void release_body(Id id) {
    const auto size = bodies.get(id).size();
    if (bodies.release(id)) previous_bytes -= size + entry_overhead;
  }

  // Drops what an entry holds; forget() also the entry itself.
  void forget_refs(const Previous& p) {
    release_shape(p.shape);
    release_body(p.body);
  }
  void forget(const Previous& p) {
    forget_refs(p);
    previous_bytes -= entry_overhead;
  }

  // After a commit: the committed sample's blocks become what the next one is compared with.
  void remember(std::vector<Seen>& seen) {
    ++commits;
    for (const auto& x : seen) {
      auto [it, fresh] = previous.try_emplace(x.header);
      if (x.matched) ++reused_blocks;
      if (x.matched && !fresh && it->second.body == *x.matched) {  // it stands another sample
        it->second.commit = commits;
        release_body(*x.matched);
      } else {  // new, changed, or matched one that another writer's commit dropped meanwhile
        const Id body = x.matched ? *x.matched : acquire_body(x.body);  // before
        shapes.add_ref(x.shape);                                       // the old goes
        const Previous next{body, x.shape, commits, 0, lines.get(x.header & ~template_bit), bodies.get(body)};
        if (fresh) previous_bytes += entry_overhead;
        else forget_refs(it->second);
        it->second = next;
      }
    }
    // The order once every entry is final: a header seen twice in one sample (a hostile dump
    // may repeat a thread) replaced its first entry's body and shape.
    last_order.swap(order);
    order.clear();
    for (const auto& x : seen) {
      auto& p = previous.at(x.header);
      p.order_at = order.size();
      order.push_back({x.header, p.body, p.shape, p.header_text, p.body_text});
    }
    lay_out_headers();
    seen.clear();
    for (auto it = previous.begin(); it != previous.end();) {
      if (it->second.commit == commits) { ++it; continue; }
      forget(it->second);
      it = previous.erase(it);
    }
  }

  // The order's header texts into order_text, unless its headers are the last order's.
  void lay_out_headers() {
    const bool same = order.size() == last_order.size() &&
                      std::equal(order.begin(), order.end(), last_order.begin(),
                                 [](const Expected& a, const Expected& b) { return a.header == b.header; });
    if (same) {
      for (std::size_t i = 0; i < order.size(); ++i) order[i].header_text = last_order[i].header_text;
      return;
    }
    previous_bytes -= order_text.size();
    std::size_t size = 0;
    for (const auto& e : order) size += e.header_text.size();
    order_text.clear();
    order_text.reserve(size);  // no reallocation below: the views taken stay valid
    for (auto& e : order) {
      const auto at = order_text.size();
      order_text.append(e.header_text);
      e.header_text = std::string_view(order_text).substr(at, e.header_text.size());
    }
    previous_bytes += order_text.size();
  }

  void release(const std::vector<Seen>& seen) {
    for (const auto& x : seen)
      if (x.matched) release_body(*x.matched);
  }

  void evict_oldest() {
    for (Id block : samples.front().blocks) release_shape(block);
    sample_bytes -= samples.front().bytes;
    samples.pop_front();
    ++evictions;
  }

  void enforce() {
    while (samples.size() > limits.max_samples ||
           (samples.size() > 1 && pool_bytes + sample_bytes + previous_bytes > limits.max_bytes))
      evict_oldest();
  }

  const Stored* find(std::uint64_t id) const {
    auto it = std::lower_bound(samples.begin(), samples.end(), id, [](const Stored& s, std::uint64_t v) { return s.info.id < v; });
    return it != samples.end() && it->info.id == id ? &*it : nullptr;
  }

  // Header templates keep their text around the numbers, which is all collapsing needs.
  std::vector<std::string_view> line_views(Id block) const {
    std::vector<std::string_view> out;
    for (Id line : shapes.get(block)) out.push_back(lines.get(line & ~template_bit));
    return out;
  }

  std::string render(const Stored& s) const {
    std::string out;
    std::size_t pos = 0;
    for (Id block : s.blocks)
      for (Id line : shapes.get(block)) {
        if (line & template_bit) detail::paste_numbers(lines.get(line & ~template_bit), s.numbers, pos, out);
        else out.append(lines.get(line));
        out.push_back('\n');
      }
    if (!s.final_newline && !out.empty()) out.pop_back();
    return out;
  }
};

// Encodes the text line by line as it arrives, or gives up (releasing what it took) as soon
// as what this one sample adds passes max_bytes: then it could not be kept even alone, and
// the ring must not grow past its bound to find that out.
struct Ring::Writer::State {
  explicit State(Impl& r) : ring(&r) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() { give_up(); }

  bool append(std::string_view chunk) {
    bytes += chunk.size();
    if (given_up) return false;
    call_before = ring->pool_bytes;
    const bool ok = take_lines(chunk);
    settle();
    return ok;
  }

  // End of text: a last line without '\n' is a line too (and says so in final_newline).
  bool finish() {
    if (given_up) return false;
    call_before = ring->pool_bytes;
    if (match) unmatch();  // the text ended inside a block that had matched so far
    s.final_newline = carry.empty();
    if (!carry.empty() && !line(carry)) return false;
    // A last line without '\n' that was a header began a match: its block is that line alone,
    // and the match's references to the remembered body and shape are let go.
    drop_match();
    take_pending();
    if (!block.empty()) s.blocks.push_back(ring->acquire_shape(block));
    block.clear();
    settle();
    s.blocks.shrink_to_fit();
    s.numbers.shrink_to_fit();
    return true;
  }

  void give_up() {
    if (given_up) return;
    given_up = true;
    drop_match();
    ring->release(s, block);
    ring->release(seen);
    s = {}, block = {}, carry = {}, seen = {}, pending = {};
  }

  bool take_lines(std::string_view chunk) {
    std::size_t at = 0;
    while (at < chunk.size()) {
      if (match) {  // never with a carry: a match starts right after its header line
        at = follow(chunk, at);
        continue;
      }
      const auto nl = chunk.find('\n', at);
      if (nl == std::string_view::npos) return carry.append(chunk.substr(at)), carry_fits();
      bool ok = true;
      if (carry.empty()) {
        ok = line(chunk.substr(at, nl - at));
      } else {  // the line a chunk before this one ended inside
        carry.append(chunk.substr(at, nl - at));
        ok = line(carry);
        carry.clear();
      }
      if (!ok) return false;
      at = nl + 1;
    }
    return true;
  }

  bool line(std::string_view text) {
    if (block.empty() && expected_header(text)) {
      // matched: the body follows
    } else if (block.empty()) {
      block.push_back(ring->line_id(text, s.numbers));
      start_match();
      if (is_blank(text)) end_block();
    } else if (!hold(text)) {
      block.push_back(ring->line_id(text, s.numbers));
      if (is_blank(text)) end_block();
    }
    if (added() > ring->limits.max_bytes) return give_up(), false;
    return true;
  }

  // The lines after a block's first are held as text until the block ends, when the block may
  // be one the ring knows (known_blocks). A header-like line inside (its numbers are cut as it
  // comes) or a block longer than kMaxHeld makes it an ordinary one.
  static constexpr std::size_t kMaxHeld = 64 * 1024;
  bool hold(std::string_view text) {
    if (!holding) return false;
    if ((!text.empty() && text.front() == '"') || pending.size() + text.size() >= kMaxHeld) {
      take_pending();
      return false;
    }
    pending.append(text).push_back('\n');
    if (is_blank(text)) end_held_block();
    return true;
  }

  // The held lines go into the block as ordinary ones.
  void take_pending() {
    holding = false;
    for (std::size_t at = 0; at < pending.size();) {
      const auto nl = pending.find('\n', at);
      block.push_back(ring->acquire_line(std::string_view(pending).substr(at, nl - at)));
      at = nl + 1;
    }
    pending.clear();
  }

  std::uint64_t block_key() const { return Impl::block_key(block.front(), pending); }

  void end_held_block() {
    const auto key = block_key();
    if (const auto it = ring->known_blocks.find(key);
        it != ring->known_blocks.end() && ring->stores(it->second, block.front(), pending)) {
      const Id shape = it->second;
      ring->shapes.add_ref(shape);
      s.blocks.push_back(shape);
      ++found;
      const Id header = block.front();
      ring->release_line(header);  // the shape holds its own reference to its first line
      // A copy of its size: `pending` keeps its buffer for the next block instead of growing
      // a new one line by line.
      seen.push_back({header, shape, std::string(pending), std::nullopt});  // held: it has lines after its first
      pending.clear();
      block.clear();
      holding = false;
      return;
    }
    take_pending();
    const Id shape = ring->acquire_shape(block, key);  // known by `key` if it is new
    s.blocks.push_back(shape);
    remember(shape);  // held: it has lines after its first
    block.clear();
  }

  // Whether `text` is the header of the thread that came next in the last sample (its numbers
  // cut as line_id would); if so the block starts matching that thread's, with no hashing.
  bool expected_header(std::string_view text) {
    if (expected_at >= ring->order.size() || text.empty() || text.front() != '"') return false;
    const auto& e = ring->order[expected_at];
    if (e.header & template_bit) {
      if (!detail::numbers_fit(text, e.header_text, s.numbers)) return false;
    } else if (text != e.header_text) {
      return false;
    }
    // Its reference to the header line is taken only if the block turns out to be another one
    // (drop_match): a whole match ends in the remembered shape, which holds its own.
    block.push_back(e.header);
    begin_match(e.body, e.shape, e.body_text, false);
    ++expected_at;
    prefetch_expected();
    return true;
  }

  // Why: the remembered texts and pool entries of the last sample's threads lie scattered on
  // the heap, and the first touch of each was a cache miss a thread (most of the time spent
  // in numbers_fit was the wait for the template's first bytes). The thread expected next is
  // fetched while this one's body is compared: a hint, never read through here.
  void prefetch_expected() const {
    if (expected_at >= ring->order.size()) return;
    const auto& n = ring->order[expected_at];
    for (std::size_t at = 0; at < n.header_text.size(); at += 64) __builtin_prefetch(n.header_text.data() + at);
    __builtin_prefetch(n.body_text.data());
    __builtin_prefetch(n.body_text.data() + 64);
    ring->shapes.prefetch(n.shape);
    ring->bodies.prefetch(n.body);
  }

  // The fast path (Impl::previous): after a header the last sample had, the bytes that follow
  // are compared with that thread's remembered body, as many at once as the chunk holds. The
  // match holds references to the body and its shape, so another writer's commit cannot take
  // them away meanwhile.
  struct Match {
    Id body = 0;
    Id shape = 0;
    std::string_view text;    // the body's, which the match's reference keeps
    std::size_t at = 0;       // bytes of the body matched so far
    bool header_ref = true;   // the block holds a reference to its header line (block.front())
  };

  void start_match() {
    holding = true;
    const auto it = ring->previous.find(block.front());
    if (it == ring->previous.end()) return;
    begin_match(it->second.body, it->second.shape, it->second.body_text);
    expected_at = it->second.order_at + 1;  // the threads after it are expected next
    prefetch_expected();
  }

  void begin_match(Id body, Id shape, std::string_view text, bool header_ref = true) {
    ring->shapes.add_ref(shape);
    ring->bodies.add_ref(body);
    match = Match{body, shape, text, 0, header_ref};
  }

  // Takes the chunk's bytes from `at` while they equal the rest of the body; returns where the
  // chunk goes on. The whole body equal ends the block (it ends at its blank line); a
  // difference makes the block an ordinary one from there.
  std::size_t follow(std::string_view chunk, std::size_t at) {
    const std::string_view body = match->text;
    const auto n = std::min(body.size() - match->at, chunk.size() - at);
    const char* want = body.data() + match->at;
    if (std::memcmp(want, chunk.data() + at, n) == 0) {
      match->at += n;
      if (match->at == body.size()) end_matched_block();
      return at + n;
    }
    const auto same = static_cast<std::size_t>(std::mismatch(want, want + n, chunk.data() + at).first - want);
    match->at += same;
    unmatch();
    return at + same;
  }

  // The remembered block, whole: it is this block.
  void end_matched_block() {
    s.blocks.push_back(match->shape);  // the match's references are the sample's and seen's now
    if (match->header_ref) ring->release_line(block.front());  // the shape holds its own reference to its header
    seen.push_back({block.front(), match->shape, {}, match->body});
    block.clear();
    match.reset();
    holding = false;
  }

  // The block differs from the remembered one: the lines matched so far are interned now, and
  // a line matched in part is carried, as if it had come the ordinary way. (A body holds no
  // header-like line and no blank line but its last, so these are plain lines of this block.)
  void unmatch() {
    const std::string_view body = match->text;
    const auto lines_end = body.rfind('\n', match->at == 0 ? 0 : match->at - 1);
    const auto whole = match->at == 0 || lines_end == std::string_view::npos ? 0 : lines_end + 1;
    pending.assign(body.substr(0, whole));  // held: the block may still be a known one
    holding = true;
    carry.assign(body.substr(whole, match->at - whole));
    drop_match();
  }

  // The block goes on without the match (an ordinary one, or released whole): it owns its
  // header line's reference from here.
  void drop_match() {
    if (!match) return;
    if (!match->header_ref) ring->lines.add_ref(block.front() & ~template_bit);
    ring->release_shape(match->shape);
    ring->release_body(match->body);
    match.reset();
  }

  void end_block() {
    holding = false;
    const Id shape = ring->acquire_shape(block);
    s.blocks.push_back(shape);
    if (block.size() > 1) remember(shape);
    block.clear();
  }

  // A block to compare the next sample's with, by its first line: its other lines as text. A
  // thread's, and as well the blocks that are no thread's but repeat (the SMR list of every
  // thread's address, a trailer): a block of one line has nothing to compare.
  void remember(Id shape) {
    std::size_t size = 0;
    for (std::size_t i = 1; i < block.size(); ++i) {
      if (block[i] & template_bit) return;  // a header-like line inside: not for the fast path
      size += ring->lines.get(block[i]).size() + 1;
    }
    std::string body;
    body.reserve(size);
    for (std::size_t i = 1; i < block.size(); ++i) body.append(ring->lines.get(block[i])).push_back('\n');
    seen.push_back({block.front(), shape, std::move(body), std::nullopt});
  }

  // A line longer than max_bytes would add more than max_bytes once complete, so a hostile
  // endless line is not carried to its end. (Only a sample kept before the limits shrank can
  // hold such a line already; refusing its repeat then is the bound's side to err on.)
  bool carry_fits() {
    if (carry.size() <= ring->limits.max_bytes) return true;
    give_up();
    return false;
  }

  // What this sample adds: the pool bytes it took (per call, so that an eviction between
  // calls, which only frees others' entries, is not counted against it) and its own lists.
  std::uint64_t added() const {
    const auto pool = pool_added + static_cast<std::int64_t>(ring->pool_bytes) - static_cast<std::int64_t>(call_before);
    return static_cast<std::uint64_t>(std::max<std::int64_t>(pool, 0)) + s.numbers.size() +
           (s.blocks.size() + block.size()) * sizeof(Id);
  }
  void settle() {
    if (!given_up) pool_added += static_cast<std::int64_t>(ring->pool_bytes) - static_cast<std::int64_t>(call_before);
  }

  Impl* ring;
  Stored s;
  std::optional<Match> match;  // the open block follows the one remembered for its header
  std::size_t expected_at = 0;  // in ring->order: the thread expected next
  std::vector<Seen> seen;      // for Impl::remember at commit
  Shape block;        // the open block's lines
  std::string pending;  // the open block's lines after its first, held as text (hold())
  bool holding = false;
  std::uint64_t found = 0;  // blocks taken from known_blocks
  std::string carry;  // the open line: the text since the last '\n'
  std::int64_t pool_added = 0;
  std::uint64_t call_before = 0;  // pool bytes when the current call began
  std::uint64_t bytes = 0;
  bool given_up = false;
};

Ring::Writer::Writer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Ring::Writer::Writer(Writer&&) noexcept = default;
Ring::Writer& Ring::Writer::operator=(Writer&&) noexcept = default;
Ring::Writer::~Writer() = default;
bool Ring::Writer::append(std::string_view chunk) { return state_ && state_->append(chunk); }
bool Ring::Writer::given_up() const noexcept { return !state_ || state_->given_up; }
std::uint64_t Ring::Writer::bytes() const noexcept { return state_ ? state_->bytes : 0; }
void Ring::Writer::abandon() {
  if (state_) state_->give_up();
}

Ring::Ring(RingLimits limits) : impl_(std::make_unique<Impl>()) { impl_->limits = limits; }
Ring::~Ring() = default;
Ring::Ring(Ring&&) noexcept = default;
Ring& Ring::operator=(Ring&&) noexcept = default;

std::optional<std::uint64_t> Ring::add(std::string_view text, sampling::DumpFacts facts) {
  auto writer = begin();
  writer.append(text);
  return commit(std::move(writer), std::move(facts));
}

Ring::Writer Ring::begin() { return Writer(std::make_unique<Writer::State>(*impl_)); }

std::optional<std::uint64_t> Ring::commit(Writer&& writer, sampling::DumpFacts facts) {
  if (!writer.state_ || writer.state_->ring != impl_.get()) throw std::invalid_argument("a ring writer commits to its own ring");
  const auto state = std::move(writer.state_);
  if (!state->finish()) return ++impl_->refused, std::nullopt;
  Stored s = std::move(state->s);
  state->s = {}, state->given_up = true;  // spent: its references are the sample's now
  s.info = {impl_->next_id++, state->bytes, std::move(facts)};
  s.bytes = bytes_of(s);
  impl_->sample_bytes += s.bytes;
  impl_->samples.push_back(std::move(s));
  impl_->remember(state->seen);
  impl_->found_blocks += state->found;
  impl_->enforce();
  return impl_->samples.back().info.id;
}

std::vector<SampleInfo> Ring::list() const {
  std::vector<SampleInfo> out;
  out.reserve(impl_->samples.size());
  for (const auto& s : impl_->samples) out.push_back(s.info);
  return out;
}

std::optional<SampleInfo> Ring::info(std::uint64_t id) const {
  const auto* s = impl_->find(id);
  return s ? std::optional(s->info) : std::nullopt;
}

std::optional<std::string> Ring::text(std::uint64_t id) const {
  const auto* s = impl_->find(id);
  return s ? std::optional(impl_->render(*s)) : std::nullopt;
}

std::optional<std::uint64_t> Ring::first_id() const {
  if (impl_->samples.empty()) return std::nullopt;
  return impl_->samples.front().info.id;
}

void Ring::set_limits(RingLimits limits) {
  impl_->limits = limits;
  impl_->enforce();
}

std::size_t Ring::size() const noexcept { return impl_->samples.size(); }
std::uint64_t Ring::bytes() const noexcept { return impl_->pool_bytes + impl_->sample_bytes + impl_->previous_bytes; }
std::uint64_t Ring::evictions() const noexcept { return impl_->evictions; }
std::uint64_t Ring::refused() const noexcept { return impl_->refused; }
std::uint64_t Ring::reused_blocks() const noexcept { return impl_->reused_blocks; }
std::uint64_t Ring::known_blocks() const noexcept { return impl_->found_blocks; }

}  // namespace lockwatch::store
