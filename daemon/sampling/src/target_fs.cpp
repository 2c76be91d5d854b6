// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/target_fs.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace lockwatch::sampling {
namespace {

constexpr int always = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;

// -1 unknown, 0 no, 1 yes: a kernel (or a seccomp filter) without openat2 says ENOSYS or
// EPERM once, and every later open takes the per-component path at once.
std::atomic<int> openat2_state{-1};

int sys_openat2(int dir, const char* path, int flags, mode_t mode) {
  open_how how{};
  how.flags = static_cast<__u64>(static_cast<unsigned>(flags));
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? static_cast<__u64>(mode) : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (int tries = 0;;) {
    const long fd = ::syscall(SYS_openat2, dir, path, &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno == EINTR) continue;
    // EAGAIN is openat2's answer to a rename racing the lookup: retrying is what the
    // kernel asks for, and the race is the target's own doing, so a few tries suffice.
    if (errno != EAGAIN || ++tries >= 4) return -1;
  }
}

// openat2 refuses (EINVAL) any flag O_PATH does not take, where openat ignores it.
int with_always(int flags) { return flags & O_PATH ? flags | O_NOFOLLOW | O_CLOEXEC : flags | always; }

bool safe_component(std::string_view c) { return !c.empty() && c != "." && c != ".."; }

// "." and ".." are refused before any call, so both kernels agree and an O_CREAT never
// creates what is then refused.
bool safe_relative(std::string_view relative) {
  if (relative.empty() || relative.front() == '/') return false;
  for (std::size_t at = 0; at <= relative.size();) {
    const auto end = std::min(relative.find('/', at), relative.size());
    if (!safe_component(relative.substr(at, end - at))) return false;
    at = end + 1;
  }
  return true;
}

// The same rule without openat2: each directory opened O_PATH | O_DIRECTORY | O_NOFOLLOW
// from the one before, so a symlinked component fails with ELOOP or ENOTDIR.
Fd open_by_component(int dir, std::string_view relative, int flags, mode_t mode, int& err) {
  Fd current;
  int at = dir;
  while (true) {
    const auto slash = relative.find('/');
    const std::string part(relative.substr(0, slash));
    if (!safe_component(part)) return err = EXDEV, Fd{};
    if (slash == std::string_view::npos) {
      Fd last(::openat(at, part.c_str(), with_always(flags), mode));
      if (!last) err = errno;
      return last;
    }
    Fd next(::openat(at, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) return err = errno, Fd{};
    current = std::move(next);
    at = current.get();
    relative.remove_prefix(slash + 1);
  }
}

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

int Fd::release() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

bool OpenError::planted() const noexcept { return err == ELOOP || err == ENOTDIR || err == EXDEV || err == ENXIO; }

bool have_openat2() {
  if (openat2_state.load() < 0) {
    Fd probe(sys_openat2(AT_FDCWD, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
    openat2_state = probe || (errno != ENOSYS && errno != EPERM) ? 1 : 0;
  }
  return openat2_state.load() == 1;
}

Fd open_beneath(int dir, std::string_view relative, int flags, OpenError* error, mode_t mode) {
  int err = 0;
  Fd fd;
  if (!safe_relative(relative)) {
    err = EXDEV;
  } else if (have_openat2()) {
    const std::string path(relative);
    fd = Fd(sys_openat2(dir, path.c_str(), with_always(flags), mode));
    if (!fd) err = errno;
  } else {
    fd = open_by_component(dir, relative, flags, mode, err);
  }
  if (error) error->err = fd ? 0 : err;
  return fd;
}

void detail::use_openat2_for_testing(bool use) { openat2_state = use ? 1 : 0; }

Fd open_root(const std::string& path, OpenError* error) {
  Fd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (error) error->err = fd ? 0 : errno;
  return fd;
}

}  // namespace lockwatch::sampling
