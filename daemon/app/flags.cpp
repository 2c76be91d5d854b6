// SPDX-License-Identifier: Apache-2.0
#include "flags.hpp"

#include <algorithm>

namespace lockwatch::app {
namespace {

constexpr std::size_t width = 100;  // the help's lines wrap before this column

bool is_help(std::string_view word) { return word == "--help" || word == "-h"; }

const FlagSpec* find_flag(const CommandSpec& command, std::string_view name) {
  for (const auto& flag : command.flags)
    if (flag.name == name) return &flag;
  return nullptr;
}

// Asked for help before any "--": the usage wins over every other problem of the line.
bool wants_help(std::span<const std::string_view> args) {
  for (const auto word : args) {
    if (word == "--") return false;
    if (is_help(word)) return true;
  }
  return false;
}

// One flag word, and its value from the same word ("--format=json") or the next one.
std::string read_flag(const CommandSpec& command, std::span<const std::string_view> args, std::size_t& i,
                      ParsedArgs& out) {
  const auto word = args[i];
  const auto equals = word.starts_with("--") ? word.find('=') : std::string_view::npos;
  const auto name = word.substr(0, equals);
  const FlagSpec* flag = find_flag(command, name);
  if (flag == nullptr) return "unknown option " + std::string(name);
  if (!flag->repeatable && out.has(flag->name)) return std::string(flag->name) + " given twice";
  if (flag->value.empty()) {
    if (equals != std::string_view::npos) return std::string(flag->name) + " takes no value";
    out.flags.push_back({flag, {}});
    return "";
  }
  if (equals != std::string_view::npos) {
    out.flags.push_back({flag, word.substr(equals + 1)});
    return "";
  }
  if (i + 1 >= args.size()) return "missing value for " + std::string(flag->name);
  out.flags.push_back({flag, args[++i]});
  return "";
}

// "--pid PID", "[--format text|json]", "[--pid PID]...": one flag in the synopsis.
std::string synopsis_word(const FlagSpec& flag) {
  std::string word(flag.name);
  if (!flag.value.empty()) word += " " + std::string(flag.value);
  if (!flag.required) word = "[" + word + "]";
  if (flag.repeatable) word += "...";
  return word;
}

// "usage: lockwatch NAME" and the words after it, wrapped under the first word.
std::string synopsis(const CommandSpec& command) {
  std::vector<std::string> words;
  for (const auto& flag : command.flags) words.push_back(synopsis_word(flag));
  if (!command.operands.empty()) words.emplace_back(command.operands);
  std::string out = "usage: lockwatch " + std::string(command.name);
  const std::string indent(out.size() + 1, ' ');
  std::size_t line_start = 0;
  for (const auto& word : words) {
    if (out.size() - line_start + 1 + word.size() > width && out.size() - line_start > indent.size()) {
      out += "\n" + indent;
      line_start = out.size() - indent.size();
      out += word;
    } else {
      out += " " + word;
    }
  }
  return out + "\n";
}

// "  --format text|json|html   help", the help column aligned across the command's flags.
std::string options(const CommandSpec& command) {
  std::vector<std::pair<std::string, std::string_view>> rows;
  for (const auto& flag : command.flags)
    rows.emplace_back(std::string(flag.name) + (flag.value.empty() ? "" : " " + std::string(flag.value)), flag.help);
  rows.emplace_back("-h, --help", "print this help");
  std::size_t column = 0;
  for (const auto& row : rows) column = std::max(column, row.first.size());
  std::string out = "options:\n";
  for (const auto& [left, help] : rows) out += "  " + left + std::string(column - left.size() + 3, ' ') + std::string(help) + "\n";
  return out;
}

}  // namespace

std::optional<std::string_view> ParsedArgs::value(std::string_view name) const {
  for (auto it = flags.rbegin(); it != flags.rend(); ++it)
    if (it->spec->name == name) return it->value;
  return std::nullopt;
}

std::string parse_args(const CommandSpec& command, std::span<const std::string_view> args, ParsedArgs& out) {
  out = {};
  if (wants_help(args)) return out.help = true, "";
  bool operands_only = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto word = args[i];
    if (operands_only || word == "-" || !word.starts_with("-")) {
      if (command.operands.empty()) return "unexpected argument '" + std::string(word) + "'";
      out.operands.push_back(word);
    } else if (word == "--") {
      operands_only = true;
    } else if (auto problem = read_flag(command, args, i, out); !problem.empty()) {
      return problem;
    }
  }
  for (const auto& flag : command.flags)
    if (flag.required && !out.has(flag.name)) return std::string(flag.name) + " is required";
  return "";
}

std::string usage_text(const CommandSpec& command) {
  std::string out = synopsis(command);
  if (!command.about.empty()) out += std::string(command.about);
  return out + "\n" + options(command);
}

int usage_error(const CommandSpec& command, std::ostream& err, std::string_view problem) {
  err << "lockwatch " << command.name << ": " << problem << "\n" << usage_text(command);
  return 2;
}

std::optional<int> read_args(const CommandSpec& command, std::span<const std::string_view> args,
                             ParsedArgs& parsed, std::ostream& out, std::ostream& err) {
  if (auto problem = parse_args(command, args, parsed); !problem.empty()) return usage_error(command, err, problem);
  if (parsed.help) return out << usage_text(command), 0;
  return std::nullopt;
}

std::string overview_text(std::span<const CommandSpec* const> commands) {
  std::size_t column = 0;
  for (const auto* command : commands) column = std::max(column, command->name.size());
  std::string out = "usage: lockwatch <command> [options]\n\ncommands:\n";
  for (const auto* command : commands)
    out += "  " + std::string(command->name) + std::string(column - command->name.size() + 3, ' ') +
           std::string(command->summary) + "\n";
  return out + "\nRun 'lockwatch <command> --help' for the options of a command.\n";
}

}  // namespace lockwatch::app
