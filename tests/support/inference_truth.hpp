// SPDX-License-Identifier: Apache-2.0
// The truth for holder inference: a -l dump names every j.u.c. owner; the same text with its
// "Locked ownable synchronizers" sections taken out is what a dump without -l of the very
// same moment shows. Inferring on the second and checking against the first measures the rule.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "lockwatch/analysis/holder_inference.hpp"
#include "lockwatch/analysis/lock_graph.hpp"
#include "test_support.hpp"

namespace lockwatch::test {

struct InferenceScore {
  std::size_t dumps = 0;
  std::size_t unowned_parks = 0;  // park waits the no -l view shows without a holder
  std::size_t inferred = 0;       // of those, waits given an inferred holder
  std::size_t correct = 0;        // inferred holders that are the owner the -l dump names
  double precision() const { return inferred == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(inferred); }
  void add(const InferenceScore& o) {
    dumps += o.dumps, unowned_parks += o.unowned_parks, inferred += o.inferred, correct += o.correct;
  }
};

/// The dump as printed without -l: every "Locked ownable synchronizers:" line and the
/// "- <0x...>" / "- None" lines under it removed.
inline std::string hide_synchronizers(std::string_view text) {
  std::string out;
  bool in_section = false;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const auto line = text.substr(0, end == std::string_view::npos ? text.size() : end + 1);
    text.remove_prefix(line.size());
    const auto first = line.find_first_not_of(" \t");
    const auto body = first == std::string_view::npos ? std::string_view{} : line.substr(first);
    if (body.starts_with("Locked ownable synchronizers:")) {
      in_section = true;
      continue;
    }
    if (in_section && body.starts_with("- ")) continue;
    in_section = false;
    out += line;
  }
  return out;
}

/// Scores one -l dump: inferred holders of its no -l view against the owners it lists. With
/// `learned`, the lines it holds from earlier dumps of the same program count, as a daemon's
/// correlator keeps them.
inline InferenceScore score_inference(std::string_view l_dump_text, analysis::SiteLines* learned = nullptr) {
  InferenceScore score;
  const auto truth_dump = parse_one(l_dump_text);
  const auto truth = analysis::build_lock_graph(truth_dump);
  std::map<std::uint32_t, std::uint32_t> owner_of_waiter;  // waiting thread -> owner (same thread indices)
  for (const auto& w : truth.waits)
    if (w.holder) owner_of_waiter[w.thread] = *w.holder;
  const auto blind_dump = parse_one(hide_synchronizers(l_dump_text));
  const auto blind = analysis::build_lock_graph(blind_dump);
  score.dumps = 1;
  for (const auto& w : blind.waits)
    if (w.kind == analysis::LockKind::park && !w.holder) ++score.unowned_parks;
  for (const auto& h : analysis::infer_juc_holders(blind_dump, blind, learned)) {
    ++score.inferred;
    const auto it = owner_of_waiter.find(blind.waits[h.wait].thread);
    if (it != owner_of_waiter.end() && it->second == h.thread) ++score.correct;
  }
  return score;
}

}  // namespace lockwatch::test
