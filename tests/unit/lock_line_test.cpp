// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include "lock_line.hpp"

using lockwatch::model::LockAction;
using lockwatch::parser::detail::parse_lock_line;
using lockwatch::parser::detail::parse_owned_line;

TEST_CASE("lock lines: every kind HotSpot prints", "[parser][lock]") {
  struct Row {
    const char* text;
    LockAction action;
    std::optional<std::uint64_t> address;
    const char* cls;
  };
  const Row rows[] = {
      {"locked <0x000000071ab1a5d8> (a sun.security.provider.Sun)", LockAction::locked, 0x71ab1a5d8, "sun.security.provider.Sun"},
      {"waiting to lock <0x000000071ddad410> (a sun.security.rsa.RSACore$BlindingParameters)", LockAction::waiting_to_lock, 0x71ddad410, "sun.security.rsa.RSACore$BlindingParameters"},
      {"waiting on <0x00000007070af278> (a java.lang.ref.ReferenceQueue$Lock)", LockAction::waiting_on, 0x7070af278, "java.lang.ref.ReferenceQueue$Lock"},
      {"waiting on <no object reference available>", LockAction::waiting_on, std::nullopt, ""},
      {"waiting to re-lock in wait() <0x00000007070af278> (a java.lang.ref.ReferenceQueue$Lock)", LockAction::waiting_to_relock, 0x7070af278, "java.lang.ref.ReferenceQueue$Lock"},
      {"parking to wait for  <0x00000006c6d1b2e0> (a java.util.concurrent.locks.ReentrantLock$NonfairSync)", LockAction::parking, 0x6c6d1b2e0, "java.util.concurrent.locks.ReentrantLock$NonfairSync"},
      {"parking to wait for <0x1> (a X)", LockAction::parking, 0x1, "X"},
      {"eliminated <0x000000079cc53848> (a java.io.DataInputStream)", LockAction::eliminated, 0x79cc53848, "java.io.DataInputStream"},
      {"eliminated <owner is scalar replaced> (a java.io.DataInputStream)", LockAction::eliminated, std::nullopt, "java.io.DataInputStream"},
      {"locked <0x00000007d1b1ce18> (a java.lang.Class for org.openide.util.RequestProcessor$TickTac)", LockAction::locked, 0x7d1b1ce18, "java.lang.Class for org.openide.util.RequestProcessor$TickTac"},
      {"waiting on the Class initialization monitor for Foo$Bar", LockAction::class_init_wait, std::nullopt, "Foo$Bar"},
      {"locked <9fffffff59c52280> (a java.io.BufferedInputStream)", LockAction::locked, 0x9fffffff59c52280ULL, "java.io.BufferedInputStream"},
      {"locked <java.lang.Object@4dadf602>", LockAction::locked, 0x4dadf602, "java.lang.Object"},  // dump_to_file (JDK 25)
      {"lock is eliminated", LockAction::eliminated, std::nullopt, ""},
  };
  for (const auto& row : rows) {
    INFO(row.text);
    auto l = parse_lock_line(row.text);
    REQUIRE(l);
    CHECK(l->action == row.action);
    CHECK(l->address == row.address);
    CHECK(l->class_name == row.cls);
  }
}

TEST_CASE("lock lines: malformed ones are refused", "[parser][lock]") {
  CHECK_FALSE(parse_lock_line("locked 0x1 (a X)"));
  CHECK_FALSE(parse_lock_line("locked <0x1"));
  CHECK_FALSE(parse_lock_line("lockbits=0x3"));
  CHECK_FALSE(parse_lock_line(""));
}

TEST_CASE("owned synchronizer entries", "[parser][lock]") {
  auto none = parse_owned_line("None");
  REQUIRE(none);
  CHECK(none->none);
  auto owned = parse_owned_line("<0x000000069ec1e898> (a java.util.concurrent.locks.ReentrantLock$NonfairSync)");
  REQUIRE(owned);
  CHECK(owned->address == 0x69ec1e898);
  CHECK(owned->class_name == "java.util.concurrent.locks.ReentrantLock$NonfairSync");
  CHECK_FALSE(parse_owned_line("<zz> (a X)"));
}
