// SPDX-License-Identifier: Apache-2.0
#include "dump_to_file_json.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "json_reader.hpp"

namespace lockwatch::parser::detail {
namespace {

using model::LockAction;
using model::LockRef;
using model::ThreadDump;
using model::ThreadInfo;

/// A j.u.c. lock whose owner the JSON names by tid (JDK 26 `parkBlocker.owner`); the owner
/// may come later in the file, so it is given its lock once every thread is read.
struct PendingOwner {
  std::uint64_t owner = 0;
  std::optional<std::uint64_t> address;
  std::string_view class_name;
};

/// The tree being read and the dump whose arena keeps every string taken from it.
struct Reader {
  const JsonDocument& doc;
  ThreadDump& dump;
  std::vector<PendingOwner>& owners;

  std::string_view keep(std::string_view text) const { return dump.arena->store(text); }
  const JsonNode* string_member(const JsonNode& object, std::string_view key) const {
    return doc.member(object, key, JsonType::string);
  }
  // Java longs: strings up to JDK 25, numbers from JDK 27 on.
  std::optional<std::uint64_t> uint_member(const JsonNode& object, std::string_view key) const {
    const JsonNode* node = doc.member(object, key);
    return node ? json_uint(*node) : std::nullopt;
  }
};

std::optional<std::uint64_t> hex_number(std::string_view text) noexcept {
  if (text.empty() || text.size() > 16) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    const bool digit = c >= '0' && c <= '9';
    const bool lower = c >= 'a' && c <= 'f';
    const bool upper = c >= 'A' && c <= 'F';
    if (!digit && !lower && !upper) return std::nullopt;
    const int nibble = digit ? c - '0' : (lower ? c - 'a' : c - 'A') + 10;
    value = value << 4 | static_cast<std::uint64_t>(nibble);
  }
  return value;
}

// "java.lang.Object@4dadf602" (Objects.toIdentityString): the class, and the identity
// hash as the address. Text without a hex hash is kept whole as the class.
LockRef lock_ref(const Reader& r, std::string_view identity, LockAction action, std::uint32_t frame) {
  const auto at = identity.rfind('@');
  const auto hash = at == std::string_view::npos ? std::nullopt : hex_number(identity.substr(at + 1));
  LockRef lock;
  lock.action = action;
  lock.address = hash;
  lock.class_name = r.keep(hash ? identity.substr(0, at) : identity);
  lock.frame = frame;
  return lock;
}

// A thread's lists as they are read; its ThreadInfo views copies in the dump's arena.
struct Lists {
  std::vector<model::Frame> frames;
  std::vector<LockRef> locks;
};

void read_frames(const Reader& r, const JsonNode& thread, Lists& lists) {
  const JsonNode* stack = r.doc.member(thread, "stack", JsonType::array);
  if (!stack) return;
  lists.frames.reserve(stack->size);
  // A non-string entry still takes its slot so that monitorsOwned depths stay aligned.
  for (const JsonNode& frame : r.doc.children(*stack))
    lists.frames.push_back({frame.is(JsonType::string) ? r.keep(frame.text) : std::string_view{}});
}

// `"parkBlocker": {"object": "C@hash"}` in JDK 25+ (JDK 26 adds `"owner": "tid"` for an
// exclusively owned AQS lock); a bare string in early JDK 25 builds. Other members are
// ignored, so later JDKs can add fields.
const JsonNode* park_blocker(const Reader& r, const JsonNode& thread, std::optional<std::uint64_t>& owner) {
  const JsonNode* blocker = r.doc.member(thread, "parkBlocker");
  if (blocker && blocker->is(JsonType::object)) {
    owner = r.uint_member(*blocker, "owner");
    blocker = r.string_member(*blocker, "object");
  }
  return blocker && blocker->is(JsonType::string) ? blocker : nullptr;
}

// What the thread waits for; jstack prints these under frame 0, before any "locked".
void read_waits(const Reader& r, const JsonNode& thread, Lists& lists) {
  std::optional<std::uint64_t> owner;
  if (const JsonNode* blocker = park_blocker(r, thread, owner)) {
    lists.locks.push_back(lock_ref(r, blocker->text, LockAction::parking, 0));
    const LockRef& lock = lists.locks.back();
    if (owner) r.owners.push_back({*owner, lock.address, lock.class_name});
  }
  if (const JsonNode* monitor = r.string_member(thread, "blockedOn"))
    lists.locks.push_back(lock_ref(r, monitor->text, LockAction::waiting_to_lock, 0));
  if (const JsonNode* monitor = r.string_member(thread, "waitingOn"))
    lists.locks.push_back(lock_ref(r, monitor->text, LockAction::waiting_on, 0));
}

// One `{"depth": n, "locks": ["C@hash" | null]}`; a depth past the stack is dropped.
void read_owned_at(const Reader& r, const JsonNode& entry, Lists& lists) {
  const auto depth = r.uint_member(entry, "depth");
  const JsonNode* locks = r.doc.member(entry, "locks", JsonType::array);
  if (!depth || *depth >= lists.frames.size() || !locks) return;
  const auto frame = static_cast<std::uint32_t>(*depth);
  for (const JsonNode& lock : r.doc.children(*locks)) {
    if (lock.is(JsonType::string))
      lists.locks.push_back(lock_ref(r, lock.text, LockAction::locked, frame));
    else if (lock.is(JsonType::null))  // elided by C2: no object to name
      lists.locks.push_back(LockRef{LockAction::eliminated, std::nullopt, {}, frame});
  }
}

void read_owned(const Reader& r, const JsonNode& thread, Lists& lists) {
  const JsonNode* owned = r.doc.member(thread, "monitorsOwned", JsonType::array);
  if (!owned) return;
  for (const JsonNode& entry : r.doc.children(*owned)) read_owned_at(r, entry, lists);
}

// JDK 21-24 have no "virtual" member; every virtual thread's stack ends in VirtualThread.run.
bool runs_as_virtual(const ThreadInfo& info) noexcept {
  if (info.frames.empty()) return false;
  const std::string_view method = model::frame_method(info.frames.back().text);
  constexpr std::string_view entry = "java.lang.VirtualThread.run";
  return method == entry || (method.ends_with(entry) && method[method.size() - entry.size() - 1] == '/');
}

// False when the object names no thread (neither a tid nor a name).
bool read_thread(const Reader& r, const JsonNode& thread, ThreadInfo& info) {
  const JsonNode* name = r.string_member(thread, "name");
  info.java_id = r.uint_member(thread, "tid");
  if (!info.java_id && !name) return false;
  if (name) info.name = r.keep(name->text);
  if (const JsonNode* state = r.string_member(thread, "state")) info.state = model::parse_thread_state(state->text);
  info.carrier = r.uint_member(thread, "carrier");
  info.truncated = !thread.closed;
  Lists lists;
  read_frames(r, thread, lists);
  read_waits(r, thread, lists);
  read_owned(r, thread, lists);
  info.frames = r.dump.arena->copy(std::span<const model::Frame>(lists.frames));
  info.locks = r.dump.arena->copy(std::span<const LockRef>(lists.locks));
  const JsonNode* is_virtual = r.doc.member(thread, "virtual", JsonType::boolean);
  info.is_virtual = is_virtual ? is_virtual->boolean : runs_as_virtual(info);
  return true;
}

void read_container(const Reader& r, const JsonNode& container) {
  const JsonNode* threads = r.doc.member(container, "threads", JsonType::array);
  if (!threads) return;
  for (const JsonNode& thread : r.doc.children(*threads)) {
    ThreadInfo info;
    if (read_thread(r, thread, info))
      r.dump.threads.push_back(std::move(info));
    else
      ++r.dump.stats.unknown_lines;
  }
}

// memchr, not std::count: g++ compiles the count to a byte loop, which took a fifth of the
// time of parsing and analysing a JVM's JSON dump; memchr is vectorised.
std::uint64_t count_lines(std::string_view text) noexcept {
  std::uint64_t newlines = 0;
  const char* const end = text.data() + text.size();
  for (const char* at = text.data(); at < end; ++at, ++newlines) {
    at = static_cast<const char*>(std::memchr(at, '\n', static_cast<std::size_t>(end - at)));
    if (at == nullptr) break;
  }
  return newlines + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

// The owner lists the lock as an owned synchronizer, as `jstack -l` would: holders of j.u.c.
// locks are then resolved like monitors. Owners only ever show for locks someone waits on.
void give_owned_locks(const std::vector<PendingOwner>& owners, ThreadDump& dump) {
  if (owners.empty()) return;
  std::unordered_map<std::uint64_t, std::size_t> by_tid;
  for (std::size_t i = 0; i < dump.threads.size(); ++i)
    if (dump.threads[i].java_id) by_tid.emplace(*dump.threads[i].java_id, i);
  std::map<std::size_t, std::vector<model::OwnedSynchronizer>> owned_by;  // thread index -> its list
  for (const auto& o : owners) {
    const auto it = by_tid.find(o.owner);
    if (it == by_tid.end() || !o.address) continue;
    auto& owned = owned_by[it->second];
    const bool listed = std::any_of(owned.begin(), owned.end(), [&](const auto& s) { return s.address == *o.address; });
    if (!listed) owned.push_back({*o.address, o.class_name});
  }
  for (const auto& [thread, owned] : owned_by)
    dump.threads[thread].owned_synchronizers = dump.arena->copy(std::span<const model::OwnedSynchronizer>(owned));
  dump.synchronizers_listed = true;
}

}  // namespace

bool parse_dump_to_file_json(std::string_view text, model::ThreadDump& dump) {
  dump.format = model::DumpFormat::dump_to_file_json;
  dump.stats.lines = count_lines(text);
  const JsonDocument doc = JsonDocument::parse(text);
  const JsonNode* top = doc.root() ? doc.member(*doc.root(), "threadDump", JsonType::object) : nullptr;
  if (!top) return false;
  std::vector<PendingOwner> owners;
  const Reader r{doc, dump, owners};
  if (const JsonNode* time = r.string_member(*top, "time")) dump.timestamp = r.keep(time->text);
  if (const JsonNode* version = r.string_member(*top, "runtimeVersion")) dump.vm_banner = r.keep(version->text);
  const JsonNode* containers = doc.member(*top, "threadContainers", JsonType::array);
  if (containers)
    for (const JsonNode& container : doc.children(*containers)) read_container(r, container);
  give_owned_locks(owners, dump);
  dump.stats.complete = doc.ok() && containers != nullptr;
  return dump.stats.complete;
}

}  // namespace lockwatch::parser::detail
