// SPDX-License-Identifier: Apache-2.0
// The inputs of `lockwatch analyze`, from bytes to an AnalyzeResult: which files a list of paths
// names (a directory: its dumps in natural name order), and each input parsed chunk by chunk into
// the correlator, the lock-time model and, when asked, a sink of whole dumps (the HTML report's
// stacks). Standard library only, so that the tests of this path link none of the CLI's
// libraries; how a file's bytes are read (mapped, or read(2)) stays with the command.
#pragma once

#include <functional>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/lock_time.hpp"
#include "lockwatch/model/thread_dump.hpp"
#include "lockwatch/parser/dump_parser.hpp"
#include "lockwatch/report/analyze_report.hpp"

namespace lockwatch::report {

/// File-name order a person expects: "dump-2" before "dump-10".
bool natural_less(std::string_view a, std::string_view b);

/// The files `paths` name, in order: a file as given ("-" too), a directory as its regular
/// files in natural name order, without hidden files and the daemon's summary.json (an
/// incident directory reads as its dumps).
std::vector<std::string> expand_inputs(const std::vector<std::string>& paths);

/// Takes each dump once the correlator and the lock-time model have seen it.
using DumpSink = std::function<void(model::ThreadDump&&)>;

/// One input parsed as it arrives: each dump goes to the correlator as soon as it is
/// complete, so memory holds one dump at a time, not the whole file. Every input of a run
/// shares the run's correlator and lock-time model (they continue one JVM's samples).
class InputFeed {
 public:
  /// Records the input in `result` under `label` at once; its dumps and parse counters
  /// are filled in as they come.
  InputFeed(std::string label, AnalyzeResult& result, analysis::Correlator& correlator,
            analysis::LockTime& lock_time, DumpSink keep = {});

  /// Any cut of the input will do: a line cut in two is carried to the next chunk.
  void feed(std::string_view chunk);
  /// The end of the input; says so on `err` when it held no thread dump.
  void finish(std::ostream& err);

 private:
  void drain();
  void add_lock_time(const model::ThreadDump& dump, const analysis::LockGraph& graph);

  AnalyzeResult& result_;
  analysis::Correlator& correlator_;
  analysis::LockTime& lock_time_;
  DumpSink keep_;
  double last_time_ = 0;
  parser::DumpParser parser_;
};

/// Streams `in` through an InputFeed labelled `label`; `lock_time` may be left out when the
/// caller wants the correlator's report only. False on a read error (the message on `err`).
bool analyze_stream(std::istream& in, const std::string& label, AnalyzeResult& result,
                    analysis::Correlator& correlator, std::ostream& err, analysis::LockTime* lock_time = nullptr,
                    DumpSink keep = {});

}  // namespace lockwatch::report
