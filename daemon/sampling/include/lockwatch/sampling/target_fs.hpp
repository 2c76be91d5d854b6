// SPDX-License-Identifier: Apache-2.0
// Opening files of a watched process without letting it steer where the open lands.
//
// Everything under /proc/PID/root belongs to the target, and a compromised target can swap
// any component of a path for a symlink at any moment. An absolute symlink there would be
// resolved in lockwatch's own filesystem (the sidecar's), and O_NOFOLLOW guards only the
// last component. So a path below the target's root is never handed to open() whole: the
// root is opened once (the kernel's /proc/PID/root link is the one link followed), and
// every component below it is resolved without following any symlink, never leaving the
// root. With openat2(2) (Linux 5.6+) that is one call with RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS; older kernels (and seccomp profiles that
// refuse openat2 with ENOSYS or EPERM) get the same rule from openat(2) per component with
// O_NOFOLLOW, refusing "." and "..".
//
// Every open also carries O_NONBLOCK and O_CLOEXEC: a FIFO planted where a regular file is
// expected must not block the thread that opens it.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace lockwatch::sampling {

/// An owned file descriptor: closed when it goes.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int release() noexcept;

 private:
  int fd_ = -1;
};

/// An open failed: errno's value, and ELOOP when a component was a symlink.
struct OpenError {
  int err = 0;
  /// The failure was a symlink, a FIFO or another type where none may be: the target
  /// planted something, as opposed to a file that is simply missing or not readable.
  bool planted() const noexcept;
};

/// Opens `relative` ("tmp/hsperfdata_app/7") below the directory `dir` following no
/// symlink in any component and never leaving `dir`. `flags` as for open(2) (O_NOFOLLOW,
/// O_NONBLOCK and O_CLOEXEC are always added); `mode` for O_CREAT.
Fd open_beneath(int dir, std::string_view relative, int flags, OpenError* error = nullptr, mode_t mode = 0);

/// The directory `path` (e.g. "/proc/42/root") opened O_PATH, following links in `path`
/// itself: this is how the target's root is reached, the only link lockwatch follows.
Fd open_root(const std::string& path, OpenError* error = nullptr);

/// Whether this kernel has openat2 (checked once); for logs and docs.
bool have_openat2();

namespace detail {
/// Tests run both resolutions on one kernel: false takes the per-component walk.
void use_openat2_for_testing(bool use);
}  // namespace detail

}  // namespace lockwatch::sampling
