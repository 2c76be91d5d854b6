// SPDX-License-Identifier: Apache-2.0
#include "dump_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

namespace lockwatch::sampling::detail {
namespace {

Refusal file_failed(std::string why) { return {Outcome::dump_file_failed, std::move(why)}; }
Refusal untrusted(std::string why) { return {Outcome::untrusted, std::move(why)}; }

std::string cannot_write(const std::string& shown, int err) {
  return "cannot create " + shown + ": " + std::strerror(err) +
         (err == EROFS || err == ENOSPC || err == EDQUOT ? " (the JVM's /tmp is read-only or full)" : "") +
         ": the JVM cannot write a JSON thread dump there";
}

// The directory is created by whoever holds the JVM's ids, so it is the JVM's own: with
// attach.as target and in a sidecar running as the JVM's user that is lockwatch itself. A root
// lockwatch that attaches as root (attach.as self) creates it as root and hands it to the
// JVM's uid and gid - the JVM must be able to create its file there, and nobody else. 0700 keeps
// other users of a shared /tmp from listing or planting names in it; the owner check below
// refuses a directory someone else made under that name first (a denial of JSON dumps only:
// the target falls back to Thread.print).
std::optional<Refusal> make_jvm_owned(const Fd& dir, const struct stat& st, const AttachTarget& t, const std::string& shown) {
  const auto uid = t.status.euid();
  const auto gid = t.status.egid();
  if (st.st_uid != uid && st.st_uid == 0 && ::geteuid() == 0 && ::fchown(dir.get(), uid, gid) != 0)
    return file_failed("cannot give " + shown + " to the JVM's uid " + std::to_string(uid) + ": " + std::strerror(errno));
  if (st.st_uid != uid && !(st.st_uid == 0 && ::geteuid() == 0))
    return untrusted(shown + " belongs to uid " + std::to_string(st.st_uid) + ", not to the JVM's uid " +
                     std::to_string(uid) + ": not using it for JSON dumps");
  if ((st.st_mode & 07777) != 0700 && ::fchmod(dir.get(), 0700) != 0)
    return file_failed("cannot make " + shown + " mode 0700: " + std::strerror(errno));
  return std::nullopt;
}

}  // namespace

std::variant<DumpDir, Refusal> open_dump_dir(const AttachTarget& t, std::chrono::seconds leftover_age) {
  const std::string name = DumpFileName::directory_for(t.status.euid());
  const std::string shown = t.tmp_shown + "/" + name;
  if (::mkdirat(t.tmp->get(), name.c_str(), 0700) != 0 && errno != EEXIST) return file_failed(cannot_write(shown, errno));
  OpenError why;
  Fd fd = open_beneath(t.tmp->get(), name, O_RDONLY | O_DIRECTORY, &why);
  if (!fd && why.planted())
    return untrusted(shown + " is not a directory (a symbolic link or another file?): not using it for JSON dumps");
  if (!fd) return file_failed("cannot open " + shown + ": " + std::strerror(why.err));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return file_failed("cannot look at " + shown + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return untrusted(shown + " is not a directory: not using it for JSON dumps");
  if (auto refusal = make_jvm_owned(fd, st, t, shown)) return *refusal;
  DumpDir dir{std::make_shared<Fd>(std::move(fd)), shown};
  remove_leftovers(dir, leftover_age);
  return dir;
}

std::size_t remove_leftovers(const DumpDir& dir, std::chrono::seconds leftover_age) {
  // fdopendir takes the descriptor it is given: list through a duplicate.
  const int copy = ::openat(dir.fd->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
  if (copy < 0) return 0;
  DIR* listing = ::fdopendir(copy);
  if (!listing) return ::close(copy), 0;
  std::vector<std::string> old;
  const auto cutoff = std::time(nullptr) - leftover_age.count();
  // The directory is bounded by what the JVM's uid puts into it; stop at a sane count.
  for (std::size_t seen = 0; seen < 10'000; ++seen) {
    const dirent* entry = ::readdir(listing);
    if (!entry) break;
    if (!DumpFileName::is_ours(entry->d_name)) continue;
    struct stat st {};
    if (::fstatat(dir.fd->get(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_mtime < cutoff)
      old.emplace_back(entry->d_name);
  }
  ::closedir(listing);
  std::size_t removed = 0;
  for (const auto& name : old)
    if (::unlinkat(dir.fd->get(), name.c_str(), 0) == 0) ++removed;
  return removed;
}

std::variant<Fd, Refusal> open_dump_file(const DumpDir& dir, const DumpFileName& name, const AttachTarget& t,
                                         std::size_t max_bytes) {
  const std::string shown = dir.shown + "/" + name.file();
  OpenError why;
  Fd fd = open_beneath(dir.fd->get(), name.file(), O_RDONLY, &why);
  if (!fd && why.err == ELOOP)
    return untrusted(shown + " is a symbolic link, not the file the JVM wrote: not following it");
  if (!fd && why.planted()) return untrusted(shown + " is not a regular file: not reading it");
  if (!fd && why.err == ENOENT) return file_failed("the JVM reported " + shown + " written, but it is not there");
  if (!fd) return file_failed("cannot open " + shown + ": " + std::strerror(why.err));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return file_failed("cannot look at " + shown + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return untrusted(shown + " is not a regular file (a FIFO or a device?): not reading it");
  if (st.st_uid != t.status.euid())
    return untrusted(shown + " belongs to uid " + std::to_string(st.st_uid) + ", not to the JVM's uid " +
                     std::to_string(t.status.euid()) + ": not reading it");
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    return Refusal{Outcome::too_large, shown + " holds " + std::to_string(st.st_size) +
                                           " bytes, more than limits.max_reply_bytes (" + std::to_string(max_bytes) + ")"};
  return fd;
}

void remove_dump_file(const DumpDir& dir, const DumpFileName& name) {
  if (dir.fd && !name.empty()) ::unlinkat(dir.fd->get(), name.file().c_str(), 0);
}

}  // namespace lockwatch::sampling::detail
