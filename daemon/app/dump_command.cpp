// SPDX-License-Identifier: Apache-2.0
#include "dump_command.hpp"

#include <charconv>
#include <string>

#include "lockwatch/config/units.hpp"
#include "lockwatch/sampling/attach_client.hpp"
#include "lockwatch/sampling/jstack_source.hpp"

namespace lockwatch::app {
namespace {

constexpr std::string_view usage =
    "usage: lockwatch dump --pid PID [--backend attach|jstack] [--format print|json] [--locks] [--timeout DURATION]\n"
    "  Prints one thread dump of a running JVM, like jstack. attach (the default) speaks the\n"
    "  JVM's attach protocol directly; jstack runs the JDK's tool. --locks adds j.u.c. lock\n"
    "  owners, which walks the whole heap while the JVM is stopped: use it sparingly.\n"
    "  --format json (attach, JDK 21+) prints the JVM's JSON dump (Thread.dump_to_file), which\n"
    "  lists virtual threads too; print (the default) is Thread.print's text.\n";

struct Options {
  int pid = 0;
  bool jstack = false;
  sampling::DumpRequest request;
};

std::string parse_args(std::span<const std::string_view> args, Options& o) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto a = args[i];
    const auto value = i + 1 < args.size() ? args[i + 1] : std::string_view{};
    if (a == "--locks") {
      o.request.locks = true;
      continue;
    }
    if (a != "--pid" && a != "--backend" && a != "--timeout" && a != "--format") return "unknown option " + std::string(a);
    if (value.empty()) return std::string(a) + " needs a value";
    ++i;
    if (a == "--pid") {
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), o.request.pid);
      if (ec != std::errc{} || ptr != value.data() + value.size() || o.request.pid <= 0) return "--pid takes a process id";
    } else if (a == "--backend") {
      if (value != "attach" && value != "jstack") return "--backend takes attach or jstack";
      o.jstack = value == "jstack";
    } else if (a == "--format") {
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
  return o.request.pid > 0 ? "" : "--pid is required";
}

}  // namespace

int run_dump(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    out << usage;
    return 0;
  }
  Options o;
  if (auto problem = parse_args(args, o); !problem.empty()) {
    err << "lockwatch dump: " << problem << "\n" << usage;
    return 2;
  }
  const auto result = o.jstack ? sampling::jstack_dump(o.request, sampling::find_jstack())
                               : sampling::attach_dump(o.request);
  if (result.outcome != sampling::Outcome::ok) {
    err << "lockwatch dump: pid " << o.request.pid << ": " << sampling::to_string(result.outcome) << ": "
        << result.error << "\n";
    return 1;
  }
  out << result.text;
  return 0;
}

}  // namespace lockwatch::app
