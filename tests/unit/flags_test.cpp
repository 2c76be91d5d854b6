// SPDX-License-Identifier: Apache-2.0
// The subcommands' one flag parser (daemon/app/flags.hpp), on a table of its own: both value
// forms, switches, repeats, required flags, operands, "--", and the help written from the table.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "flags.hpp"

using namespace lockwatch;
using app::CommandSpec;
using app::FlagSpec;
using app::ParsedArgs;

namespace {

constexpr FlagSpec table[] = {
    {"--pid", "PID", "a process", true},
    {"--format", "text|json", "the form"},
    {"--locks", "", "a switch"},
    {"--name", "NAME", "needed", false, true},
};
constexpr CommandSpec with_operands{"probe", "a command for the tests", "FILE...", "  What it does.\n", table};
constexpr CommandSpec without_operands{"flagsonly", "flags only", "", "", table};

struct Parse {
  std::string problem;
  ParsedArgs args;
};

Parse parse(const CommandSpec& command, std::vector<std::string_view> words) {
  Parse p;
  p.problem = app::parse_args(command, words, p.args);
  return p;
}

std::vector<std::string_view> values_of(const ParsedArgs& args, std::string_view name) {
  std::vector<std::string_view> out;
  for (const auto& given : args.flags)
    if (given.spec->name == name) out.push_back(given.value);
  return out;
}

}  // namespace

TEST_CASE("flags: --flag value and --flag=value are the same; switches take none", "[cli][flags]") {
  const auto spaced = parse(with_operands, {"--name", "a", "--format", "json", "--locks", "f"});
  REQUIRE(spaced.problem.empty());
  const auto joined = parse(with_operands, {"--name=a", "--format=json", "--locks", "f"});
  REQUIRE(joined.problem.empty());
  for (const auto* p : {&spaced, &joined}) {
    CHECK(p->args.value("--format") == "json");
    CHECK(p->args.value("--name") == "a");
    CHECK(p->args.has("--locks"));
    CHECK_FALSE(p->args.has("--pid"));
    CHECK(p->args.operands == std::vector<std::string_view>{"f"});
    CHECK_FALSE(p->args.help);
  }
  // Only the first '=' splits: a value may hold more of them.
  CHECK(parse(with_operands, {"--name=a=b"}).args.value("--name") == "a=b");
  // An empty value is a value; what it means is the command's to say.
  CHECK(parse(with_operands, {"--name="}).args.value("--name") == "");
  CHECK(parse(with_operands, {"--name", "a", "--locks=yes"}).problem == "--locks takes no value");
}

TEST_CASE("flags: unknown options and missing values are named", "[cli][flags]") {
  CHECK(parse(with_operands, {"--name", "a", "--x"}).problem == "unknown option --x");
  CHECK(parse(with_operands, {"--name", "a", "--x=1"}).problem == "unknown option --x");
  CHECK(parse(with_operands, {"--name", "a", "-x"}).problem == "unknown option -x");
  CHECK(parse(with_operands, {"--name", "a", "--PID", "1"}).problem == "unknown option --PID");  // no case folding
  CHECK(parse(with_operands, {"--name", "a", "--pid"}).problem == "missing value for --pid");
  CHECK(parse(with_operands, {"--name"}).problem == "missing value for --name");
  // The next word is the value even when it looks like a flag: a regex or a path may.
  CHECK(parse(with_operands, {"--name", "--locks"}).args.value("--name") == "--locks");
}

TEST_CASE("flags: a repeatable flag keeps every value in order; any other given twice is refused", "[cli][flags]") {
  const auto p = parse(without_operands, {"--pid", "1", "--name", "a", "--pid=2", "--pid", "3"});
  REQUIRE(p.problem.empty());
  CHECK(values_of(p.args, "--pid") == std::vector<std::string_view>{"1", "2", "3"});
  CHECK(p.args.value("--pid") == "3");
  REQUIRE(p.args.flags.size() == 4);  // command-line order, across flags
  CHECK(p.args.flags[1].spec->name == "--name");
  CHECK(parse(without_operands, {"--name", "a", "--format", "text", "--format", "json"}).problem == "--format given twice");
  CHECK(parse(without_operands, {"--name", "a", "--locks", "--locks"}).problem == "--locks given twice");
  CHECK(parse(without_operands, {"--name", "a", "--name=b"}).problem == "--name given twice");
}

TEST_CASE("flags: required flags, operands, '-' and '--'", "[cli][flags]") {
  CHECK(parse(with_operands, {"f"}).problem == "--name is required");
  CHECK(parse(without_operands, {"--name", "a", "f"}).problem == "unexpected argument 'f'");
  CHECK(parse(without_operands, {"--name", "a", "-"}).problem == "unexpected argument '-'");
  const auto p = parse(with_operands, {"a", "--name", "n", "-", "--", "--pid", "-x"});
  REQUIRE(p.problem.empty());
  CHECK(p.args.operands == std::vector<std::string_view>{"a", "-", "--pid", "-x"});  // after "--": operands
  CHECK_FALSE(p.args.has("--pid"));
  // Parsing again starts afresh.
  ParsedArgs reused;
  REQUIRE(app::parse_args(with_operands, std::vector<std::string_view>{"--name", "a", "x"}, reused).empty());
  REQUIRE(app::parse_args(with_operands, std::vector<std::string_view>{"--name", "b"}, reused).empty());
  CHECK(reused.operands.empty());
  CHECK(reused.flags.size() == 1);
}

TEST_CASE("flags: --help or -h anywhere before '--' asks for the usage, over any other problem", "[cli][flags]") {
  for (const auto& words : {std::vector<std::string_view>{"--help"}, {"-h"}, {"--x", "--help"}, {"--name", "a", "f", "-h"}}) {
    const auto p = parse(with_operands, words);
    CHECK(p.problem.empty());
    CHECK(p.args.help);
  }
  const auto after = parse(with_operands, {"--name", "a", "--", "--help"});
  CHECK_FALSE(after.args.help);
  CHECK(after.args.operands == std::vector<std::string_view>{"--help"});
}

TEST_CASE("flags: the help is written from the table", "[cli][flags]") {
  const auto help = app::usage_text(with_operands);
  CHECK(help.starts_with("usage: lockwatch probe [--pid PID]... [--format text|json] [--locks] --name NAME FILE...\n"
                         "  What it does.\n"));
  for (const auto& flag : table) {
    INFO(flag.name);
    const auto line = help.find("\n  " + std::string(flag.name));
    REQUIRE(line != std::string::npos);
    CHECK(help.substr(line, help.find('\n', line + 1) - line).find(flag.help) != std::string::npos);
  }
  CHECK(help.find("\n  -h, --help ") != std::string::npos);
  CHECK(app::usage_text(without_operands).starts_with("usage: lockwatch flagsonly [--pid PID]... [--format text|json] [--locks] --name NAME\n"));
}

TEST_CASE("flags: a long synopsis wraps under the command's name", "[cli][flags]") {
  static constexpr FlagSpec many[] = {
      {"--first-long-flag", "VALUE", "1"}, {"--second-long-flag", "VALUE", "2"}, {"--third-long-flag", "VALUE", "3"},
      {"--fourth-long-flag", "VALUE", "4"}, {"--fifth-long-flag", "VALUE", "5"},
  };
  constexpr CommandSpec wide{"wide", "", "FILE", "", many};
  const auto help = app::usage_text(wide);
  std::istringstream lines(help.substr(0, help.find("\noptions:")));
  std::string line;
  int synopsis_lines = 0;
  while (std::getline(lines, line) && !line.empty()) {
    ++synopsis_lines;
    CHECK(line.size() <= 100);
    if (synopsis_lines > 1) CHECK(line.starts_with(std::string(std::string_view("usage: lockwatch wide ").size(), ' ') + "["));
  }
  CHECK(synopsis_lines == 2);
  CHECK(help.find("[--fifth-long-flag VALUE] FILE\n") != std::string::npos);
}

TEST_CASE("flags: usage errors and --help give the exit codes every command shares", "[cli][flags]") {
  std::ostringstream out, err;
  ParsedArgs args;
  CHECK(app::read_args(with_operands, std::vector<std::string_view>{"--x"}, args, out, err) == 2);
  CHECK(out.str().empty());
  CHECK(err.str() == "lockwatch probe: unknown option --x\n" + app::usage_text(with_operands));
  err.str("");
  CHECK(app::read_args(with_operands, std::vector<std::string_view>{"-h"}, args, out, err) == 0);
  CHECK(out.str() == app::usage_text(with_operands));
  CHECK(err.str().empty());
  CHECK_FALSE(app::read_args(with_operands, std::vector<std::string_view>{"--name", "a"}, args, out, err).has_value());
}

TEST_CASE("flags: the overview lists each command with its summary", "[cli][flags]") {
  const CommandSpec* commands[] = {&with_operands, &without_operands};
  const auto text = app::overview_text(commands);
  CHECK(text.starts_with("usage: lockwatch <command> [options]\n"));
  CHECK(text.find("\n  probe       a command for the tests\n") != std::string::npos);
  CHECK(text.find("\n  flagsonly   flags only\n") != std::string::npos);
}
