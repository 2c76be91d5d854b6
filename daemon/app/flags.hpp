// SPDX-License-Identifier: Apache-2.0
// Each subcommand's command line as a table: its flags (name, value, help, repeatable,
// required), its operands and what it does. One parser reads every subcommand's arguments from
// its table and one writer makes its --help, so every command words a usage error the same way
// ("lockwatch dump: unknown option --x", "missing value for --pid") and its help cannot drift
// from the flags it takes. What a value means (a pid, a duration) is the command's to check.
// Standard library only.
#pragma once

#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lockwatch::app {

struct FlagSpec {
  std::string_view name;     // with its dashes: "--pid"
  std::string_view value;    // the value as the help names it ("PID", "text|json|html"); empty: a switch
  std::string_view help;     // one line in the help's list of options
  bool repeatable = false;   // may be given more than once, every value kept in order; else twice is an error
  bool required = false;     // the command cannot run without it
};

struct CommandSpec {
  std::string_view name;      // "dump": "lockwatch dump ..."
  std::string_view summary;   // its line in `lockwatch --help`
  std::string_view operands;  // the arguments after the flags, as the synopsis shows them ("FILE|DIR|-..."); empty: none
  std::string_view about;     // the paragraph after the synopsis, each line indented by two spaces
  std::span<const FlagSpec> flags;
};

/// A flag as given on the command line: its entry in the table, and its value ("" for a switch).
struct GivenFlag {
  const FlagSpec* spec = nullptr;
  std::string_view value;
};

struct ParsedArgs {
  bool help = false;                       // --help or -h: the command prints its usage and exits 0
  std::vector<GivenFlag> flags;            // in command-line order
  std::vector<std::string_view> operands;  // in command-line order

  /// The value of the last `name` given; nullopt when it was not given ("" for a switch).
  std::optional<std::string_view> value(std::string_view name) const;
  bool has(std::string_view name) const { return value(name).has_value(); }
};

/// Reads `args` (the words after the subcommand's name) by `command`'s table. Returns the
/// usage problem - "unknown option --x", "missing value for --pid", "--format given twice",
/// "--locks takes no value", "--pid is required", "unexpected argument 'x'" - or "" when the
/// arguments fit. `--flag value` and `--flag=value` are the same; "--" ends the flags (every
/// word after it is an operand); a lone "-" is an operand (standard input, where a command
/// reads it). --help or -h anywhere before "--" asks for the usage, whatever else is there.
std::string parse_args(const CommandSpec& command, std::span<const std::string_view> args, ParsedArgs& out);

/// The command's --help: "usage: lockwatch NAME FLAGS... OPERANDS" (wrapped), its `about`,
/// then every flag with its help.
std::string usage_text(const CommandSpec& command);

/// "lockwatch NAME: problem" and the usage on `err`; returns 2, the usage exit code.
int usage_error(const CommandSpec& command, std::ostream& err, std::string_view problem);

/// parse_args with the outcomes every command shares: --help (the usage on `out`, 0) and a
/// usage problem (usage_error, 2). nullopt: `parsed` holds arguments the command may run with.
std::optional<int> read_args(const CommandSpec& command, std::span<const std::string_view> args,
                             ParsedArgs& parsed, std::ostream& out, std::ostream& err);

/// `lockwatch --help`: every command's name and summary, from their tables.
std::string overview_text(std::span<const CommandSpec* const> commands);

}  // namespace lockwatch::app
