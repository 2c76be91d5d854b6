// SPDX-License-Identifier: Apache-2.0
// The hsperfdata layout, as HotSpot writes it (perfMemory.hpp) and jvmstat reads it
// (sun.jvmstat.perfdata.monitor.v2_0), checked against files of JDK 17.0.21 and 25.0.3:
//   prologue, 32 bytes: magic CA FE C0 C0 (these bytes in every byte order), byte_order
//     (0 big, 1 little), major_version (2), minor_version (0), accessible, then in the
//     file's byte order used:i32 overflow:i32 mod_time_stamp:i64 entry_offset:i32
//     num_entries:i32.
//   entry, at entry_offset and then back to back (8-aligned in practice):
//     entry_length:i32 name_offset:i32 vector_length:i32 data_type:u8 ('J' jlong,
//     'B' byte vector) flags:u8 data_units:u8 data_variability:u8 data_offset:i32, the
//     offsets relative to the entry; the name is NUL-terminated, string values are
//     'B' vectors NUL-terminated within vector_length bytes.
// The JVM appends entries while it runs: it reserves the space (raising `used`), fills
// the entry, then raises num_entries. So the walk stops after num_entries entries and
// never reads past `used`; what lies beyond may be half written.
#include "lockwatch/sampling/perfdata.hpp"
#include "lockwatch/sampling/target_fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <dirent.h>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>
#include <system_error>
#include <utility>

namespace lockwatch::sampling {
namespace {

constexpr std::size_t kPrologueSize = 32;
constexpr std::size_t kEntryHeaderSize = 20;
constexpr int kSupportedMajor = 2;
constexpr std::string_view kMagic{"\xca\xfe\xc0\xc0", 4};
// Far above any real file (32 KiB by default): a larger one is not hsperfdata.
constexpr std::size_t kMaxFileBytes = std::size_t{16} << 20;

void set_error(std::string* error, std::string text) {
  if (error != nullptr) *error = std::move(text);
}

std::nullopt_t fail(std::string* error, std::string text) {
  set_error(error, std::move(text));
  return std::nullopt;
}

// Record why an entry was rejected.
std::nullopt_t reject(std::string& why, std::string text) {
  why = std::move(text);
  return std::nullopt;
}
bool refuse(std::string& why, std::string text) {
  why = std::move(text);
  return false;
}

// Fixed-width reads in the file's byte order; every read is bounds-checked.
class Bytes {
 public:
  Bytes(std::string_view bytes, bool little_endian) : bytes_(bytes), little_(little_endian) {}

  std::size_t size() const noexcept { return bytes_.size(); }
  std::optional<std::int32_t> i32(std::size_t at) const {
    const auto v = unsigned_at(at, 4);
    if (!v) return std::nullopt;
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(*v));
  }
  std::optional<std::int64_t> i64(std::size_t at) const {
    const auto v = unsigned_at(at, 8);
    if (!v) return std::nullopt;
    return static_cast<std::int64_t>(*v);
  }
  std::optional<std::uint8_t> u8(std::size_t at) const {
    if (at >= bytes_.size()) return std::nullopt;
    return static_cast<std::uint8_t>(bytes_[at]);
  }
  // [at, at + length) if it lies inside the buffer.
  std::optional<std::string_view> slice(std::size_t at, std::size_t length) const {
    if (at > bytes_.size() || length > bytes_.size() - at) return std::nullopt;
    return bytes_.substr(at, length);
  }

 private:
  std::optional<std::uint64_t> unsigned_at(std::size_t at, std::size_t width) const {
    const auto raw = slice(at, width);
    if (!raw) return std::nullopt;
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < width; ++i) {
      v = (v << 8) | static_cast<std::uint8_t>((*raw)[little_ ? width - 1 - i : i]);
    }
    return v;
  }

  std::string_view bytes_;
  bool little_;
};

struct Prologue {
  bool little_endian = true;
  int major = 0;
  int minor = 0;
  bool accessible = false;
  std::int32_t used = 0;
  std::int64_t mod_time_stamp = 0;
  std::int32_t entry_offset = 0;
  std::int32_t num_entries = 0;
};

// Checks what the entry walk relies on: where entries start, how many, where they end.
std::optional<Prologue> check_prologue(const Prologue& p, std::size_t size, std::string* error) {
  if (p.major != kSupportedMajor) {
    return fail(error, "unsupported hsperfdata version " + std::to_string(p.major) + "." +
                           std::to_string(p.minor) + " (only 2.x is known)");
  }
  const auto offset = p.entry_offset;
  if (offset < static_cast<std::int32_t>(kPrologueSize) || static_cast<std::size_t>(offset) > size ||
      offset % 4 != 0) {
    return fail(error, "entry_offset " + std::to_string(offset) + " outside the file or misaligned");
  }
  if (p.num_entries < 0) return fail(error, "negative num_entries " + std::to_string(p.num_entries));
  if (p.used < offset) return fail(error, "used " + std::to_string(p.used) + " ends before the first entry");
  return p;
}

// The prologue's fields; `bytes` holds at least kPrologueSize bytes.
Prologue prologue_fields(std::string_view bytes, bool little_endian) {
  Prologue p;
  p.little_endian = little_endian;
  p.major = static_cast<std::uint8_t>(bytes[5]);
  p.minor = static_cast<std::uint8_t>(bytes[6]);
  p.accessible = bytes[7] != 0;
  const Bytes b(bytes, little_endian);
  p.used = b.i32(8).value_or(0);
  p.mod_time_stamp = b.i64(16).value_or(0);
  p.entry_offset = b.i32(24).value_or(0);
  p.num_entries = b.i32(28).value_or(0);
  return p;
}

std::optional<Prologue> read_prologue(std::string_view bytes, std::string* error) {
  if (bytes.size() < kPrologueSize) {
    return fail(error, "too short for the prologue: " + std::to_string(bytes.size()) + " bytes");
  }
  if (bytes.substr(0, kMagic.size()) != kMagic) return fail(error, "bad magic: not an hsperfdata file");
  const auto order = static_cast<std::uint8_t>(bytes[4]);
  if (order > 1) return fail(error, "bad byte_order " + std::to_string(order));
  return check_prologue(prologue_fields(bytes, order == 1), bytes.size(), error);
}

struct EntryHeader {
  std::size_t length = 0;
  std::size_t name_offset = 0;
  std::int32_t vector_length = 0;
  std::uint8_t type = 0;
  std::size_t data_offset = 0;
};

// An offset that must point into the entry's body: [header end, limit].
std::optional<std::size_t> body_offset(std::optional<std::int32_t> raw, std::size_t limit) {
  if (!raw || *raw < static_cast<std::int32_t>(kEntryHeaderSize)) return std::nullopt;
  const auto offset = static_cast<std::size_t>(*raw);
  if (offset > limit) return std::nullopt;
  return offset;
}

// The header of the entry at `at`, if the whole entry lies inside `b`.
std::optional<EntryHeader> read_entry_header(const Bytes& b, std::size_t at, std::string& why) {
  if (at % 4 != 0) return reject(why, "misaligned entry");
  const auto length = b.i32(at);
  if (!length) return reject(why, "entry header past the end of the data");
  if (*length < static_cast<std::int32_t>(kEntryHeaderSize) || static_cast<std::size_t>(*length) > b.size() - at) {
    return reject(why, "entry_length " + std::to_string(*length) + " out of bounds");
  }
  EntryHeader h;
  h.length = static_cast<std::size_t>(*length);
  const auto name = body_offset(b.i32(at + 4), h.length - 1);  // at least the NUL fits
  const auto data = body_offset(b.i32(at + 16), h.length);
  if (!name || !data) return reject(why, "name_offset or data_offset outside the entry");
  h.name_offset = *name;
  h.data_offset = *data;
  h.vector_length = b.i32(at + 8).value_or(-1);
  h.type = b.u8(at + 12).value_or(0);
  return h;
}

// The NUL-terminated text in `field`; nullopt if there is no NUL.
std::optional<std::string_view> c_string(std::string_view field) {
  const auto nul = field.find('\0');
  if (nul == std::string_view::npos) return std::nullopt;
  return field.substr(0, nul);
}

// Counter names as published by JDK 17.0.21 and Temurin 25.0.3 (counters_of). JDK 25 no
// longer publishes the sun.rt._sync_* counters, so contended_lock_attempts and parks are
// nullopt there.
namespace counter {
constexpr std::string_view threads_live = "java.threads.live", threads_daemon = "java.threads.daemon",
                           contended = "sun.rt._sync_ContendedLockAttempts", parks = "sun.rt._sync_Parks",
                           safepoints = "sun.rt.safepoints", safepoint_time = "sun.rt.safepointTime",
                           safepoint_sync_time = "sun.rt.safepointSyncTime", frequency = "sun.os.hrt.frequency",
                           capabilities = "sun.rt.jvmCapabilities", vm_version = "java.property.java.vm.version",
                           old_vm_version = "java.vm.version";
constexpr std::array<std::string_view, 4> collections{"sun.gc.collector.0.invocations", "sun.gc.collector.1.invocations",
                                                      "sun.gc.collector.2.invocations", "sun.gc.collector.3.invocations"};
constexpr std::array<std::string_view, 11> scalars{threads_live, threads_daemon, contended, parks, safepoints,
                                                   safepoint_time, safepoint_sync_time, frequency, capabilities,
                                                   vm_version, old_vm_version};
}  // namespace counter

bool is_counter_name(std::string_view name) {
  return std::find(counter::scalars.begin(), counter::scalars.end(), name) != counter::scalars.end() ||
         std::find(counter::collections.begin(), counter::collections.end(), name) != counter::collections.end();
}

// The value's bytes [data_offset, data_offset + length) if they lie inside the entry.
std::optional<std::string_view> value_bytes(const Bytes& b, std::size_t at, const EntryHeader& h,
                                            std::size_t length) {
  if (length > h.length - h.data_offset) return std::nullopt;
  return b.slice(at + h.data_offset, length);
}

// Adds the entry's value to `out` when `keep`; false (with `why`) if it does not fit the entry,
// kept or not, so a parse that keeps fewer entries stops where the whole one does.
bool decode_value(const Bytes& b, std::size_t at, const EntryHeader& h, std::string_view name, PerfData& out,
                  std::string& why, bool keep) {
  if (h.vector_length < 0) return refuse(why, "negative vector_length");
  if (h.type == 'J' && h.vector_length == 0) {
    if (!value_bytes(b, at, h, 8)) return refuse(why, "jlong value past the entry's end");
    if (keep) out.longs.emplace(std::string(name), b.i64(at + h.data_offset).value_or(0));
  } else if (h.type == 'B' && h.vector_length > 0) {
    const auto raw = value_bytes(b, at, h, static_cast<std::size_t>(h.vector_length));
    if (!raw) return refuse(why, "vector_length " + std::to_string(h.vector_length) + " past the entry's end");
    if (keep) out.strings.emplace(std::string(name), std::string(raw->substr(0, raw->find('\0'))));
  }
  // Any other kind is skipped, so a future JVM's new types do not hide the counters we know.
  return true;
}

// Adds the entry at `at` to `out`; false (with `why`) if it is torn or corrupt.
bool decode_entry(const Bytes& b, std::size_t at, const EntryHeader& h, PerfData& out, std::string& why,
                  PerfDataKeep keep) {
  // The name ends before the data, or (name after data: never written by HotSpot) at the entry's end.
  const std::size_t name_end = h.data_offset > h.name_offset ? h.data_offset : h.length;
  const auto field = b.slice(at + h.name_offset, name_end - h.name_offset);
  const auto name = field ? c_string(*field) : std::nullopt;
  if (!name || name->empty()) return refuse(why, "name empty or not NUL-terminated inside the entry");
  // Duplicates are not written by HotSpot; the first one wins.
  return decode_value(b, at, h, *name, out, why, keep == PerfDataKeep::all || is_counter_name(*name));
}

// Walks the published entries; stops at the first bad one, leaving `out.complete` false.
void read_entries(std::string_view bytes, const Prologue& p, PerfData& out, std::string* error, PerfDataKeep keep) {
  const std::size_t end = std::min(bytes.size(), static_cast<std::size_t>(p.used));
  const Bytes b(bytes.substr(0, end), p.little_endian);
  auto at = static_cast<std::size_t>(p.entry_offset);
  for (std::int32_t i = 0; i < p.num_entries; ++i) {
    std::string why;
    const auto header = read_entry_header(b, at, why);
    if (!header || !decode_entry(b, at, *header, out, why, keep)) {
      set_error(error, "entry " + std::to_string(i) + " at offset " + std::to_string(at) + ": " + why);
      return;
    }
    at += header->length;  // >= the header size: the walk always advances
  }
  out.complete = true;
}

// Position 0 of sun.rt.jvmCapabilities is AttachListener::is_attach_supported() (HotSpot's
// runtimeService.cpp; jvmstat's MonitoredVmUtil.isAttachable reads the same position),
// position 1 is INCLUDE_SERVICES. Verified with JDK 17.0.21 and Temurin 25.0.3: "1100...0"
// (64 chars) by default, "0100...0" with -XX:+DisableAttachMechanism. -Xrs leaves the
// string (and the set of counters) unchanged; it only makes the attach listener start at
// JVM start, without a "Signal Dispatcher" thread, instead of on the first SIGQUIT.
std::optional<bool> attach_capability(const PerfData& data) {
  const auto caps = data.get_string(counter::capabilities);
  if (!caps || caps->empty() || ((*caps)[0] != '0' && (*caps)[0] != '1')) return std::nullopt;
  return (*caps)[0] == '1';
}

std::string errno_text(const std::string& what, const std::string& path, int err) {
  return what + " " + path + ": " + std::generic_category().message(err);
}

// A regular file, checked on the descriptor itself (no window between check and use).
bool check_regular(const std::string& path, const Fd& file, std::string* error) {
  struct stat st {};
  if (::fstat(file.get(), &st) != 0) return set_error(error, errno_text("cannot stat", path, errno)), false;
  if (!S_ISREG(st.st_mode)) return set_error(error, "not a regular file: " + path), false;
  return true;
}

// Reads what the JVM has written - up to the prologue's `used`, where the entry walk stops -
// or to EOF when the prologue does not say: a private copy, so values cannot change between a
// check and a use. Why not always to EOF: the file is the JVM's whole reservation (32 KiB by
// default) and a JVM uses about a third of it (12 KiB for a 1000-thread JDK 17), and the copy,
// of memory the JVM keeps writing to, was a tenth of the io thread's time, read on every tick.
std::optional<std::string> read_written(const std::string& path, int fd, std::string* error) {
  // pread from the start: a file held open between ticks (TargetPerfDataFile) is read again.
  std::string bytes;
  std::array<char, 16384> buf;  // not zeroed: only what a read wrote is used
  std::optional<std::size_t> used;
  for (;;) {
    if (!used && bytes.size() >= kPrologueSize) {
      const auto p = read_prologue(bytes, nullptr);
      used = p ? static_cast<std::size_t>(p->used) : kMaxFileBytes + 1;  // unreadable: all of it
    }
    if (used && bytes.size() >= *used) return bytes;
    const auto n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(bytes.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(error, errno_text("cannot read", path, errno));
    if (n == 0) return bytes;
    bytes.append(buf.data(), static_cast<std::size_t>(n));
    if (bytes.size() > kMaxFileBytes) return fail(error, "too large for an hsperfdata file: " + path);
  }
}

// A regular file's written bytes, parsed; errors name `path`.
std::optional<PerfData> read_and_parse(const std::string& path, const Fd& file, std::string* error,
                                       PerfDataKeep keep = PerfDataKeep::all) {
  const auto bytes = read_written(path, file.get(), error);
  if (!bytes) return std::nullopt;
  std::string why;
  auto data = parse_perfdata(*bytes, &why, keep);
  if (!why.empty()) set_error(error, path + ": " + why);
  return data;
}

struct Candidate {
  std::string user_dir;  // "hsperfdata_app"
  struct timespec modified {};
};

bool newer(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

// `<tmp>/<user_dir>/<nspid>` if `user_dir` is a real directory (not a symlink) holding
// that regular file; looked at through descriptors, never by a path the target can bend.
std::optional<Candidate> candidate_in(int tmp, const std::string& user_dir, const std::string& nspid) {
  if (user_dir.rfind("hsperfdata_", 0) != 0) return std::nullopt;
  Fd dir = open_beneath(tmp, user_dir, O_PATH | O_DIRECTORY);
  struct stat st {};
  if (!dir || ::fstatat(dir.get(), nspid.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
    return std::nullopt;
  return Candidate{user_dir, st.st_mtim};
}

std::vector<std::string> list_user_dirs(int tmp_path_fd) {
  std::vector<std::string> names;
  // getdents needs a readable descriptor: reopen the O_PATH one through its own link.
  Fd readable(::openat(tmp_path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
  if (!readable) return names;
  DIR* d = ::fdopendir(readable.release());
  if (!d) return names;
  // A target could fill its /tmp with entries: only hsperfdata_* ones are kept, and at most
  // this many, so a listing costs bounded memory.
  constexpr std::size_t max_user_dirs = 256;
  while (const dirent* e = ::readdir(d))
    if (std::string_view(e->d_name).rfind("hsperfdata_", 0) == 0 && names.size() < max_user_dirs)
      names.emplace_back(e->d_name);
  ::closedir(d);
  return names;
}

// The hsperfdata_* names of each /tmp, listed again only when that directory has changed.
// Every process of a container (or of the host) shares one /tmp, and discovery and each
// dump's preflight look into it: without this a /tmp of 3 000 entries was read once per
// process per rescan - a container forking processes made the sampling thread list its /tmp
// thousands of times a second. A directory's mtime and ctime move with every entry added,
// removed or renamed; a listing made less than `kSettled` after the last change may have
// missed one in the same timestamp tick, so it is not kept. Keyed by the directory and the
// effective ids it was listed under (attach.as target): one user's listing never serves another.
class UserDirListings {
 public:
  std::vector<std::string> of(int tmp_path_fd) {
    struct stat st {};
    if (::fstat(tmp_path_fd, &st) != 0) return list_user_dirs(tmp_path_fd);
    uid_t ruid = 0, euid = 0, suid = 0;  // the calling thread's own: act_as.hpp switches them per thread
    gid_t rgid = 0, egid = 0, sgid = 0;
    ::getresuid(&ruid, &euid, &suid);
    ::getresgid(&rgid, &egid, &sgid);
    const Key key{st.st_dev, st.st_ino, euid, egid};
    {
      std::lock_guard lock(mu_);
      if (auto it = kept_.find(key); it != kept_.end() && same(it->second.mtime, st.st_mtim) && same(it->second.ctime, st.st_ctim))
        return it->second.names;
    }
    auto names = list_user_dirs(tmp_path_fd);
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    if (settled(st, now)) {
      std::lock_guard lock(mu_);
      if (kept_.size() >= kMaxKept) kept_.clear();  // as many /tmps as mount namespaces: rarely more than a few
      kept_[key] = Listing{st.st_mtim, st.st_ctim, names};
    }
    return names;
  }

 private:
  using Key = std::tuple<dev_t, ino_t, std::uint32_t, std::uint32_t>;
  struct Listing {
    struct timespec mtime {}, ctime {};
    std::vector<std::string> names;
  };
  static constexpr std::size_t kMaxKept = 256;
  static constexpr long kSettled = 2;  // seconds

  static bool same(const struct timespec& a, const struct timespec& b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }
  static bool settled(const struct stat& st, const struct timespec& now) {
    const auto last = std::max(st.st_mtim.tv_sec, st.st_ctim.tv_sec);
    return now.tv_sec - last >= kSettled;
  }

  std::mutex mu_;
  std::map<Key, Listing> kept_;
};

std::vector<std::string> entries_of(int tmp_path_fd) {
  static UserDirListings listings;
  return listings.of(tmp_path_fd);
}

std::string root_of(const std::string& proc_root, int pid) { return proc_root + "/" + std::to_string(pid) + "/root"; }

}  // namespace

std::optional<std::int64_t> PerfData::get_long(std::string_view name) const {
  const auto it = longs.find(name);
  if (it == longs.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string_view> PerfData::get_string(std::string_view name) const {
  const auto it = strings.find(name);
  if (it == strings.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::optional<PerfData> parse_perfdata(std::string_view bytes, std::string* error, PerfDataKeep keep) {
  const auto prologue = read_prologue(bytes, error);
  if (!prologue) return std::nullopt;
  PerfData out;
  out.mod_time_stamp = prologue->mod_time_stamp;
  out.accessible = prologue->accessible;
  out.major_version = prologue->major;
  out.minor_version = prologue->minor;
  out.num_entries = prologue->num_entries;
  read_entries(bytes, *prologue, out, error, keep);
  return out;
}

JvmCounters counters_of(const PerfData& data) {
  JvmCounters c;
  c.threads_live = data.get_long(counter::threads_live);
  c.threads_daemon = data.get_long(counter::threads_daemon);
  c.contended_lock_attempts = data.get_long(counter::contended);
  c.parks = data.get_long(counter::parks);
  c.safepoints = data.get_long(counter::safepoints);
  c.safepoint_time_ticks = data.get_long(counter::safepoint_time);
  c.safepoint_sync_time_ticks = data.get_long(counter::safepoint_sync_time);
  c.frequency = data.get_long(counter::frequency);
  for (const auto name : counter::collections)
    if (const auto n = data.get_long(name)) c.gc_collections = c.gc_collections.value_or(0) + *n;
  c.attach_supported = attach_capability(data);
  const auto version = data.get_string(counter::vm_version);
  c.vm_version = std::string(version ? *version : data.get_string(counter::old_vm_version).value_or(""));
  return c;
}

std::optional<PerfDataFile> locate_perfdata(const std::string& proc_root, int pid, int nspid) {
  if (pid <= 0 || nspid <= 0) return std::nullopt;
  const Fd root = open_root(root_of(proc_root, pid));
  const Fd tmp = root ? open_beneath(root.get(), "tmp", O_PATH | O_DIRECTORY) : Fd{};
  if (!tmp) return std::nullopt;
  const std::string name = std::to_string(nspid);
  std::optional<Candidate> best;
  // A JVM killed hard leaves its file behind; another user's stale file may share the name.
  for (const auto& user_dir : entries_of(tmp.get())) {
    auto found = candidate_in(tmp.get(), user_dir, name);
    if (found && (!best || newer(found->modified, best->modified))) best = std::move(found);
  }
  if (!best) return std::nullopt;
  const std::string beneath = "tmp/" + best->user_dir + "/" + name;
  return PerfDataFile{root_of(proc_root, pid) + "/" + beneath, beneath};
}

std::optional<std::string> find_perfdata_file(const std::string& proc_root, int pid, int nspid) {
  auto file = locate_perfdata(proc_root, pid, nspid);
  return file ? std::optional(file->path) : std::nullopt;
}

std::optional<TargetPerfDataFile> TargetPerfDataFile::open(const std::string& proc_root, int pid,
                                                           const std::string& beneath_root, std::string* error) {
  std::string shown = root_of(proc_root, pid) + "/" + beneath_root;
  OpenError why;
  const Fd root = open_root(root_of(proc_root, pid), &why);
  Fd file = root ? open_beneath(root.get(), beneath_root, O_RDONLY, &why) : Fd{};
  if (!file) {
    set_error(error, why.planted() ? "refused " + shown + ": a symlink or another file type where the JVM's "
                                         "hsperfdata directory and file should be (not following it)"
                                   : errno_text("cannot open", shown, why.err));
    return std::nullopt;
  }
  if (!check_regular(shown, file, error)) return std::nullopt;
  return TargetPerfDataFile(std::move(shown), std::move(file));
}

std::optional<PerfData> TargetPerfDataFile::read(std::string* error, PerfDataKeep keep) const {
  return read_and_parse(shown_, file_, error, keep);
}

std::optional<PerfData> read_target_perfdata(const std::string& proc_root, int pid, const std::string& beneath_root,
                                             std::string* error, PerfDataKeep keep) {
  const auto file = TargetPerfDataFile::open(proc_root, pid, beneath_root, error);
  return file ? file->read(error, keep) : std::nullopt;
}

std::optional<PerfData> read_perfdata_file(const std::string& path, std::string* error) {
  // O_NOFOLLOW: a file given by path (lockwatch's own, or a test's) is read only if it is
  // no symlink; a target's file goes through read_target_perfdata instead.
  Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!file) return set_error(error, errno_text("cannot open", path, errno)), std::nullopt;
  if (!check_regular(path, file, error)) return std::nullopt;
  return read_and_parse(path, file, error);
}

}  // namespace lockwatch::sampling
