// SPDX-License-Identifier: Apache-2.0
// The one variable part of any attach command lockwatch sends: the path a JVM writes its JSON
// thread dump to (`Thread.dump_to_file -format=json PATH`).
//
// Only generate() makes a non-empty name, from getrandom(2) and the JVM's uid - nothing from
// the configuration, the API or the target - so no input can steer what the JVM writes to or
// smuggle a second argument into the command. The name is unpredictable (128 random bits): a
// process that could write into the directory cannot plant a file there ahead of the JVM.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lockwatch::sampling {

class DumpFileName {
 public:
  /// Empty: encodes no command (attach_protocol.hpp refuses it).
  DumpFileName() = default;

  /// A fresh name in the directory of `jvm_uid`; nothing when the kernel has no randomness
  /// to give (getrandom failed), where a predictable name must not be used instead.
  static std::optional<DumpFileName> generate(std::uint32_t jvm_uid);

  /// ".lockwatch-<uid>": lockwatch's own directory in the JVM's /tmp. One per uid, because
  /// on a node every user's JVMs share one /tmp and each must write into its own.
  static std::string directory_for(std::uint32_t jvm_uid);
  /// Whether `name` is one generate() could have made: the only entries the clean-up removes.
  static bool is_ours(std::string_view name) noexcept;

  bool empty() const noexcept { return file_.empty(); }
  const std::string& directory() const noexcept { return directory_; }  // below the JVM's /tmp
  const std::string& file() const noexcept { return file_; }            // "<32 hex digits>.json"
  /// "/tmp/.lockwatch-<uid>/<32 hex>.json", the path as the JVM resolves it in its own root.
  std::string jvm_path() const { return "/tmp/" + directory_ + "/" + file_; }

 private:
  DumpFileName(std::string directory, std::string file) : directory_(std::move(directory)), file_(std::move(file)) {}
  std::string directory_;
  std::string file_;
};

}  // namespace lockwatch::sampling
