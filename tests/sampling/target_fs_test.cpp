// SPDX-License-Identifier: Apache-2.0
// Opening a target's files: no symlink in any component is followed, nothing leaves the
// root, nothing blocks - with openat2 and with the per-component walk of older kernels.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>

#include "lockwatch/sampling/perfdata.hpp"
#include "lockwatch/sampling/target_fs.hpp"
#include "test_support.hpp"

using namespace lockwatch::sampling;
namespace fs = std::filesystem;

namespace {

struct Tree {
  fs::path base = fs::temp_directory_path() / ("lockwatch-target-fs-" + std::to_string(::getpid()) + "-" +
                                               std::to_string(std::random_device{}()));
  fs::path root = base / "root";     // the target's root
  fs::path outside = base / "ours";  // lockwatch's own files, which the target must not reach
  Tree() {
    fs::create_directories(root / "tmp" / "hsperfdata_app");
    fs::create_directories(outside);
    lockwatch::test::write_file(root / "tmp" / "hsperfdata_app" / "7", "inside");
    lockwatch::test::write_file(outside / "secret", "outside");
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(base, ec);
  }
  Fd open() const { return open_root(root.string()); }
};

std::string read_fd(const Fd& fd) {
  std::string out(64, '\0');
  const auto n = ::read(fd.get(), out.data(), out.size());
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

}  // namespace

TEST_CASE("target fs: symlinks are refused in every component, on both resolutions", "[target_fs][security]") {
  const bool kernel_has_openat2 = have_openat2();
  for (const bool with_openat2 : {true, false}) {
    if (with_openat2 && !kernel_has_openat2) {
      WARN("this kernel has no openat2: only the per-component walk is tested");
      continue;
    }
    detail::use_openat2_for_testing(with_openat2);
    INFO("openat2: " << with_openat2);
    const Tree t;
    const Fd root = t.open();
    REQUIRE(root);
    const Fd ok = open_beneath(root.get(), "tmp/hsperfdata_app/7", O_RDONLY);
    REQUIRE(ok);
    CHECK(read_fd(ok) == "inside");

    // The last component swapped for an absolute symlink into our files.
    fs::create_symlink(t.outside / "secret", t.root / "tmp" / "hsperfdata_app" / "8");
    OpenError why;
    CHECK_FALSE(open_beneath(root.get(), "tmp/hsperfdata_app/8", O_RDONLY, &why));
    CHECK(why.planted());

    // A directory in the middle swapped for a symlink (O_NOFOLLOW alone guards only the last).
    fs::rename(t.root / "tmp" / "hsperfdata_app", t.root / "tmp" / "moved");
    fs::create_directories(t.outside / "hsperfdata_app");
    lockwatch::test::write_file(t.outside / "hsperfdata_app" / "7", "outside");
    fs::create_directory_symlink(t.outside / "hsperfdata_app", t.root / "tmp" / "hsperfdata_app");
    CHECK_FALSE(open_beneath(root.get(), "tmp/hsperfdata_app/7", O_RDONLY, &why));
    CHECK(why.planted());
    // A relative link that stays inside is refused too: no link is followed at all.
    fs::remove(t.root / "tmp" / "hsperfdata_app");
    fs::create_directory_symlink("moved", t.root / "tmp" / "hsperfdata_app");
    CHECK_FALSE(open_beneath(root.get(), "tmp/hsperfdata_app/7", O_RDONLY, &why));

    // Paths that leave the root are refused before any lookup.
    for (const char* escape : {"../ours/secret", "tmp/../../ours/secret", "/tmp/x", "", "tmp/./moved/7", "tmp//moved/7"}) {
      INFO(escape);
      CHECK_FALSE(open_beneath(root.get(), escape, O_RDONLY, &why));
      CHECK(why.err == EXDEV);
    }
    CHECK(fs::exists(t.outside / "secret"));
  }
  detail::use_openat2_for_testing(kernel_has_openat2);
}

TEST_CASE("target fs: a FIFO or a symlink never blocks an open and is never created through", "[target_fs][security]") {
  const Tree t;
  const Fd root = t.open();
  REQUIRE(::mkfifo((t.root / "tmp" / "fifo").c_str(), 0600) == 0);
  // Opened for writing with nobody reading: without O_NONBLOCK this would block forever.
  OpenError why;
  const auto started = std::chrono::steady_clock::now();
  CHECK_FALSE(open_beneath(root.get(), "tmp/fifo", O_WRONLY, &why));
  CHECK(why.err == ENXIO);
  CHECK(why.planted());
  // Read side: opens at once, and the caller's type check refuses it.
  const Fd reader = open_beneath(root.get(), "tmp/fifo", O_RDONLY);
  REQUIRE(reader);
  struct stat st {};
  REQUIRE(::fstat(reader.get(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));

  // O_CREAT | O_EXCL through a planted symlink creates nothing at its target.
  fs::create_symlink(t.outside / "created", t.root / "tmp" / "trigger");
  CHECK_FALSE(open_beneath(root.get(), "tmp/trigger", O_WRONLY | O_CREAT | O_EXCL, &why, 0600));
  CHECK(why.err == EEXIST);
  CHECK_FALSE(fs::exists(t.outside / "created"));
}

TEST_CASE("perfdata: a user directory swapped for a symlink after discovery is not read", "[perfdata][security]") {
  const Tree t;
  const auto proc = t.base / "proc";
  fs::create_directories(proc / "42");
  fs::create_directory_symlink(t.root, proc / "42" / "root");  // a fixture's /proc/PID/root
  const auto file = locate_perfdata(proc.string(), 42, 7);
  REQUIRE(file);
  CHECK(file->beneath_root == "tmp/hsperfdata_app/7");
  std::string error;
  CHECK_FALSE(read_target_perfdata(proc.string(), 42, file->beneath_root, &error));  // "inside" is no hsperfdata
  CHECK(error.find("refused") == std::string::npos);

  fs::rename(t.root / "tmp" / "hsperfdata_app", t.root / "tmp" / "old");
  fs::create_directory_symlink(t.outside, t.root / "tmp" / "hsperfdata_app");
  lockwatch::test::write_file(t.outside / "7", "outside");
  error.clear();
  CHECK_FALSE(read_target_perfdata(proc.string(), 42, file->beneath_root, &error));
  CHECK(error.find("refused") != std::string::npos);
  CHECK_FALSE(locate_perfdata(proc.string(), 42, 7));  // and discovery skips it
}
