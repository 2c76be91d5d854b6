// SPDX-License-Identifier: Apache-2.0
#include "dump_command.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "lockwatch/config/units.hpp"
#include "lockwatch/parser/dump_parser.hpp"
#include "lockwatch/sampling/attach_client.hpp"
#include "lockwatch/sampling/jstack_source.hpp"

namespace lockwatch::app {
namespace {

constexpr FlagSpec flag_table[] = {
    {"--pid", "PID", "the JVM's process id", false, true},
    {"--backend", "attach|jstack", "attach (the default): the attach protocol; jstack: the JDK's tool"},
    {"--format", "print|json", "print (the default): Thread.print's text; json (attach, JDK 21+)"},
    {"--locks", "", "add j.u.c. lock owners (Thread.print -l)"},
    {"--timeout", "DURATION", "give up after this long, the whole dump (default 10s)"},
};

constexpr CommandSpec spec{
    "dump",
    "print one thread dump of a running JVM (like jstack; attach is safe and ~100x cheaper)",
    "",
    "  Prints one thread dump of a running JVM, like jstack. attach (the default) speaks the\n"
    "  JVM's attach protocol directly; jstack runs the JDK's tool. --locks adds j.u.c. lock\n"
    "  owners, which walks the whole heap while the JVM is stopped: use it sparingly.\n"
    "  --format json (attach, JDK 21+) prints the JVM's JSON dump (Thread.dump_to_file), which\n"
    "  lists virtual threads too; print (the default) is Thread.print's text.\n",
    flag_table,
};

struct Options {
  bool jstack = false;
  sampling::DumpRequest request;
};

// The values of the flags the table let through; an error message, or "" when they are good.
std::string read_options(const ParsedArgs& args, Options& o) {
  for (const auto& [flag, value] : args.flags) {
    if (flag->name == "--locks") {
      o.request.locks = true;
    } else if (flag->name == "--pid") {
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), o.request.pid);
      if (ec != std::errc{} || ptr != value.data() + value.size() || o.request.pid <= 0) return "--pid takes a process id";
    } else if (flag->name == "--backend") {
      if (value != "attach" && value != "jstack") return "--backend takes attach or jstack";
      o.jstack = value == "jstack";
    } else if (flag->name == "--format") {
      if (value != "print" && value != "json") return "--format takes print or json";
      o.request.form = value == "json" ? sampling::DumpForm::json : sampling::DumpForm::print;
    } else {
      auto d = config::parse_duration(value);
      if (!d || d->count() <= 0) return "--timeout takes a duration like 500ms, 10s, 1m";
      o.request.timeout = *d;
    }
  }
  if (o.jstack && o.request.form == sampling::DumpForm::json) return "--format json needs --backend attach";
  if (o.request.locks && o.request.form == sampling::DumpForm::json) return "--locks applies to --format print only";
  return "";
}

// The reply, kept in the pieces it arrived in until it has all come: printing while it streams
// in would let a slow reader of our stdout (a pager, a full pipe) hold the JVM at its
// safepoint, which JDK 25 keeps until the reader has every byte. Whether it holds a dump is the
// parser's to say, as in the daemon; it decides at the dump's first lines, so only those are
// fed to it and the rest is never parsed (nor copied into one string). A piece is a read of up
// to 64 KiB: it goes to the parser a slice at a time, or the first piece alone would be parsed
// whole (a fifth of the command's CPU on a 1000-thread JVM).
class HeldReply {
 public:
  void add(std::string_view piece) {
    pieces_.emplace_back(piece);
    for (auto rest = piece; !rest.empty() && !parser_.dump_begun(); rest.remove_prefix(std::min(rest.size(), slice)))
      parser_.feed(rest.substr(0, slice));
  }
  bool is_dump() {
    if (!parser_.dump_begun()) parser_.finish();
    return parser_.dump_begun();
  }
  std::string head(std::size_t n = 256) const {  // what no_dump_error shows of it
    std::string h;
    for (auto p = pieces_.begin(); p != pieces_.end() && h.size() < n; ++p) h.append(*p, 0, n - h.size());
    return h;
  }
  std::size_t bytes() const {
    std::size_t n = 0;
    for (const auto& p : pieces_) n += p.size();
    return n;
  }
  void print(std::ostream& out) const {
    for (const auto& p : pieces_) out.write(p.data(), static_cast<std::streamsize>(p.size()));
  }

 private:
  static constexpr std::size_t slice = 4096;
  parser::DumpParser parser_;
  std::vector<std::string> pieces_;
};

}  // namespace

const CommandSpec& dump_spec() { return spec; }

int run_dump(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  ParsedArgs parsed;
  if (auto code = read_args(spec, args, parsed, out, err)) return *code;
  Options o;
  if (auto problem = read_options(parsed, o); !problem.empty()) return usage_error(spec, err, problem);
  HeldReply reply;
  o.request.on_text = [&reply](std::string_view piece) { reply.add(piece); };
  auto result = o.jstack ? sampling::jstack_dump(o.request, sampling::find_jstack()) : sampling::attach_dump(o.request);
  if (!result.text.empty()) reply.add(result.text);  // jstack keeps its text whole
  if (result.outcome == sampling::Outcome::ok && !reply.is_dump())
    result.outcome = sampling::Outcome::parse_error,
    result.error = sampling::no_dump_error(result.source, reply.head(), reply.bytes());
  if (result.outcome != sampling::Outcome::ok) {
    err << "lockwatch dump: pid " << o.request.pid << ": " << sampling::to_string(result.outcome) << ": "
        << result.error << "\n";
    return 1;
  }
  reply.print(out);
  return 0;
}

}  // namespace lockwatch::app
