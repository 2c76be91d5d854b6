// SPDX-License-Identifier: Apache-2.0
// The JSON dump's pure parts: the generated file name, the jcmd request and its reply, and the
// choice of dump form from the evidence its parsed dumps give.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "lockwatch/sampling/attach_protocol.hpp"
#include "lockwatch/sampling/dump_file_name.hpp"
#include "lockwatch/sampling/dump_form.hpp"

using namespace lockwatch::sampling;
using namespace std::string_literals;
using namespace std::chrono_literals;

namespace {

// What a parsed dump tells the chooser (service::evidence_of reads it; the service unit tests
// check that reading on real dump texts).
constexpr FormEvidence jdk25{25, false, false};         // platform threads only, either form
constexpr FormEvidence jdk25_carrier{25, true, true};   // a mounted virtual thread
constexpr FormEvidence jdk25_helper{25, true, false};   // the JVM's helper threads alone
constexpr FormEvidence jdk21_helper{21, true, false};   // the JVM's helper threads alone
constexpr FormEvidence jdk17{17, false, false};
constexpr FormEvidence failed{};                        // a dump that did not finish has none

}  // namespace

TEST_CASE("dump file name: random, in the uid's directory, recognisable for the clean-up", "[json][protocol]") {
  std::set<std::string> names;
  for (int i = 0; i < 1000; ++i) {
    const auto n = DumpFileName::generate(1000);
    REQUIRE(n);
    CHECK(n->directory() == ".lockwatch-1000");
    CHECK(n->file().size() == 37);
    CHECK(DumpFileName::is_ours(n->file()));
    CHECK(n->jvm_path() == "/tmp/.lockwatch-1000/" + n->file());
    CHECK(n->jvm_path().find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789/.-") == std::string::npos);
    names.insert(n->file());
  }
  CHECK(names.size() == 1000);  // 128 random bits: a repeat here is a broken generator
  CHECK(DumpFileName::generate(0)->directory() == ".lockwatch-0");
  CHECK(DumpFileName().empty());
  CHECK_FALSE(DumpFileName::is_ours("0123456789abcdef0123456789abcdef.jsonx"));
  CHECK_FALSE(DumpFileName::is_ours("0123456789ABCDEF0123456789abcdef.json"));
  CHECK_FALSE(DumpFileName::is_ours("0123456789abcdef0123456789abcde.json"));
  CHECK_FALSE(DumpFileName::is_ours("../456789abcdef0123456789abcdef.json"));
  CHECK_FALSE(DumpFileName::is_ours("keep.json"));
  CHECK(DumpFileName::is_ours("0123456789abcdef0123456789abcdef.json"));
}

TEST_CASE("jcmd request: exactly jcmd's bytes, the generated path its only variable part", "[json][protocol][security]") {
  const auto n = DumpFileName::generate(42);
  REQUIRE(n);
  const auto bytes = encode_request(AttachCommand::dump_to_file_json, *n);
  CHECK(bytes == "1\0jcmd\0Thread.dump_to_file -format=json /tmp/.lockwatch-42/"s + n->file() + "\0\0\0"s);
  CHECK(bytes.find("-overwrite") == std::string::npos);  // never truncates an existing file
  CHECK_THROWS_AS(encode_request(AttachCommand::dump_to_file_json), std::invalid_argument);
  // The thread dumps ignore a name: no path reaches them.
  CHECK(encode_request(AttachCommand::threaddump, *n) == encode_request(AttachCommand::threaddump));
}

TEST_CASE("jcmd reply: only 'Created <our path>' on the first line counts as written", "[json][protocol]") {
  const auto n = DumpFileName::generate(7);
  REQUIRE(n);
  CHECK(reports_created("Created " + n->jvm_path() + "\n", *n));
  CHECK(reports_created("Created " + n->jvm_path(), *n));
  CHECK_FALSE(reports_created("Failed: java.nio.file.FileSystemException: " + n->jvm_path() + ": Read-only file system\n", *n));
  CHECK_FALSE(reports_created(n->jvm_path() + " exists, use -overwrite to overwrite\n", *n));
  CHECK_FALSE(reports_created("Created /tmp/elsewhere.json\n", *n));
  CHECK_FALSE(reports_created("Created " + n->jvm_path() + ".other\n", *n));
  CHECK_FALSE(reports_created("Created " + n->jvm_path() + "\n", DumpFileName{}));
}

TEST_CASE("JDK version from a VM version string", "[json][form]") {
  CHECK(jdk_major_of("25.0.3+9-LTS mixed mode, sharing):") == 25);
  CHECK(jdk_major_of("21.0.5+11-LTS mixed mode") == 21);
  CHECK(jdk_major_of("26-ea+5-123 mixed mode") == 26);
  CHECK(jdk_major_of("17.0.9+9-Debian-1 mixed mode") == 17);
  CHECK(jdk_major_of("11.0.21+9 mixed mode") == 11);
  CHECK(jdk_major_of("25.382-b05 mixed mode") == 8);  // JDK 8 prints HotSpot's own version
  CHECK(jdk_major_of("25.0-b70 mixed mode") == 8);
  CHECK(jdk_major_of("mixed mode") == 0);
  CHECK(jdk_major_of("") == 0);
  CHECK(jdk_major_of("99999.1") == 0);
}

TEST_CASE("form choice: auto, print and json", "[json][form]") {
  const auto t0 = FormChooser::Clock::time_point{} + 1h;
  SECTION("auto: print until a JDK 25 JVM shows virtual threads, then JSON every sample") {
    FormChooser c;
    CHECK(c.choose(t0) == DumpForm::print);
    c.observe(DumpForm::print, Outcome::ok, jdk25, t0);
    CHECK(c.choose(t0) == DumpForm::print);  // JDK 25, no virtual threads
    c.observe(DumpForm::print, Outcome::ok, jdk25_carrier, t0 + 1s);
    for (int i = 0; i < 4; ++i) CHECK(c.choose(t0 + 2s) == DumpForm::json);
    CHECK(c.reason(t0 + 2s) == "JDK 25 runs virtual threads");
  }
  SECTION("auto: a JDK 17 JVM stays print, even with evidence of virtual threads") {
    FormChooser c;
    c.observe(DumpForm::print, Outcome::ok, jdk17, t0);
    CHECK(c.jdk_major() == 17);
    CHECK(c.choose(t0 + 1s) == DumpForm::print);
    CHECK(c.reason(t0 + 1s).find("JDK 17") != std::string::npos);
    // JDK 17 has no JSON dump: whatever a dump seemed to show, the chooser does not ask for one.
    c.observe(DumpForm::print, Outcome::ok, FormEvidence{17, true, true}, t0 + 2s);
    CHECK(c.choose(t0 + 3s) == DumpForm::print);
    CHECK(c.reason(t0 + 3s) == "JDK 17 has no JSON thread dump");
  }
  SECTION("auto: a dump that states no version keeps the JDK known before") {
    FormChooser c;
    CHECK(c.reason(t0) == "JDK version not known yet");
    c.observe(DumpForm::print, Outcome::ok, jdk25_carrier, t0);
    c.observe(DumpForm::print, Outcome::ok, FormEvidence{0, true, true}, t0 + 1s);
    CHECK(c.jdk_major() == 25);
    CHECK(c.choose(t0 + 2s) == DumpForm::json);
  }
  SECTION("auto: JDK 21-24 alternate, so print samples keep the platform threads' locks") {
    FormChooser c;
    c.observe(DumpForm::print, Outcome::ok, jdk21_helper, t0);
    std::string forms;
    for (int i = 0; i < 4; ++i) forms += c.choose(t0 + 1s) == DumpForm::json ? 'j' : 'p';
    CHECK(forms == "jpjp");
  }
  SECTION("auto: JSON without virtual threads for the idle time goes back to print, and stays") {
    FormTimes times;
    times.idle = 10min;
    FormChooser c(FormMode::automatic, times);
    c.observe(DumpForm::print, Outcome::ok, jdk25_carrier, t0);
    CHECK(c.choose(t0 + 1s) == DumpForm::json);
    c.observe(DumpForm::json, Outcome::ok, jdk25, t0 + 5min);
    CHECK(c.choose(t0 + 5min) == DumpForm::json);  // not idle long enough
    c.observe(DumpForm::json, Outcome::ok, jdk25, t0 + 11min);
    CHECK(c.choose(t0 + 11min) == DumpForm::print);
    // The JVM's helper threads outlive the virtual threads: alone they do not bring JSON back.
    c.observe(DumpForm::print, Outcome::ok, jdk25_helper, t0 + 12min);
    CHECK(c.choose(t0 + 12min) == DumpForm::print);
    // A mounted virtual thread does.
    c.observe(DumpForm::print, Outcome::ok, jdk25_carrier, t0 + 13min);
    CHECK(c.choose(t0 + 13min) == DumpForm::json);
  }
  SECTION("a JSON dump the JVM cannot write: print for the fallback time, then JSON again") {
    FormTimes times;
    times.fallback = 10min;
    for (const auto mode : {FormMode::json, FormMode::automatic}) {
      FormChooser c(mode, times);
      c.observe(DumpForm::print, Outcome::ok, jdk25_carrier, t0);
      CHECK(c.choose(t0) == DumpForm::json);
      c.observe(DumpForm::json, Outcome::dump_file_failed, failed, t0 + 1s);
      CHECK(c.falling_back(t0 + 2s));
      CHECK(c.choose(t0 + 2s) == DumpForm::print);
      c.observe(DumpForm::print, Outcome::ok, jdk25_carrier, t0 + 9min);
      CHECK(c.choose(t0 + 9min) == DumpForm::print);
      CHECK(c.reason(t0 + 9min).find("could not write") != std::string::npos);
      CHECK(c.choose(t0 + 10min + 2s) == DumpForm::json);
    }
  }
  SECTION("other failures of a JSON dump (a timeout) change nothing") {
    FormChooser c(FormMode::json);
    c.observe(DumpForm::json, Outcome::timeout, failed, t0);
    CHECK(c.choose(t0 + 1s) == DumpForm::json);
  }
  SECTION("print and json force the form") {
    FormChooser print(FormMode::print);
    print.observe(DumpForm::print, Outcome::ok, jdk25_carrier, t0);
    CHECK(print.choose(t0 + 1s) == DumpForm::print);
    FormChooser json(FormMode::json);
    CHECK(json.choose(t0) == DumpForm::json);  // before anything is known
    json.set_mode(FormMode::print);
    CHECK(json.choose(t0) == DumpForm::print);
  }
}

TEST_CASE("dump_format names", "[json][form]") {
  CHECK(parse_form_mode("auto") == FormMode::automatic);
  CHECK(parse_form_mode("print") == FormMode::print);
  CHECK(parse_form_mode("json") == FormMode::json);
  CHECK_FALSE(parse_form_mode("JSON"));
  CHECK(to_string(FormMode::automatic) == "auto");
  CHECK(to_string(DumpForm::json) == "json");
  CHECK(to_string(Outcome::dump_file_failed) == "dump_file_failed");
}
