// SPDX-License-Identifier: Apache-2.0
// A test case that cannot run here (no root, no Temurin 25, no chromium) says so and returns;
// CTest then shows it as skipped, not passed. A run whose every test case skipped exits with
// kSkipExitCode (tests/CMakeLists.txt sets SKIP_RETURN_CODE); a failure still fails, and a
// test case that skips only part of itself (one JDK of two) keeps WARN and passes.
#pragma once

#include <string_view>

namespace lockwatch::test {

inline constexpr int kSkipExitCode = 77;

/// Prints "SKIPPED: reason" as a Catch2 warning and marks the running test case skipped.
void skip(std::string_view reason);

/// Whether skip() was called since the last call of this function (read once per test case).
bool take_skip() noexcept;

}  // namespace lockwatch::test
