// SPDX-License-Identifier: Apache-2.0
// Catch2's runner, with the skip exit code of skip.hpp.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <string>

#include "skip.hpp"

namespace lockwatch::test {
namespace {

bool skip_called = false;

/// Counts the test cases run and those that skipped as a whole.
struct SkipCounter : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  static inline int cases = 0;
  static inline int skipped = 0;
  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    TestEventListenerBase::testCaseStarting(info);
    skip_called = false;
  }
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    ++cases;
    if (take_skip()) ++skipped;
    TestEventListenerBase::testCaseEnded(stats);
  }
};

}  // namespace

void skip(std::string_view reason) {
  WARN("SKIPPED: " << std::string(reason));
  skip_called = true;
}

bool take_skip() noexcept {
  const bool was = skip_called;
  skip_called = false;
  return was;
}

}  // namespace lockwatch::test

// The macro pastes its argument into a name: registered inside the namespace, unqualified.
namespace lockwatch::test {
CATCH_REGISTER_LISTENER(SkipCounter)
}  // namespace lockwatch::test

int main(int argc, char* argv[]) {
  using lockwatch::test::SkipCounter;
  const int result = Catch::Session().run(argc, argv);
  const bool all_skipped = SkipCounter::cases > 0 && SkipCounter::skipped == SkipCounter::cases;
  return result == 0 && all_skipped ? lockwatch::test::kSkipExitCode : result;
}
