// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the dump parser. Whatever the bytes: no crash, and the same facts whether
// the input arrives whole or split at arbitrary offsets (the push parser's contract), and
// whether or not the parser reuses the bodies of the sample before (parser::BodyCache): the
// input is also read as successive samples of one target, cut at form feeds (without one:
// the input twice, then once with a byte changed), each parsed with the bodies of the one
// before. The dumps then go through the correlator, which must not crash either.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/model/canonical.hpp"
#include "lockwatch/parser/dump_parser.hpp"

namespace {

namespace parser = lockwatch::parser;
using lockwatch::model::ThreadDump;

// Small limits keep every input cheap: the fuzzer must find bugs, not run out of memory.
parser::ParserLimits fuzz_limits() {
  parser::ParserLimits limits;
  limits.max_line_bytes = 4096;
  limits.max_threads = 2000;
  limits.max_frames_per_thread = 256;
  limits.max_dumps = 1000;
  return limits;
}

struct Parsed {
  std::vector<ThreadDump> dumps;
  parser::ParseStats stats;
};

std::size_t byte_at(std::string_view in, std::size_t i) {
  return i < in.size() ? static_cast<unsigned char>(in[i]) : 0;
}

// Cut offsets come from the first input bytes, so the fuzzer steers where chunks split:
// every offset of a prefix (1-byte pieces: BOM, header, first lines), then a few anywhere.
std::vector<std::size_t> cut_points(std::string_view in) {
  std::vector<std::size_t> cuts;
  const std::size_t prefix = std::min(in.size(), 8 + 4 * byte_at(in, 0));
  for (std::size_t at = 1; at <= prefix; ++at) cuts.push_back(at);
  const std::size_t rest = in.size() - prefix;
  for (std::size_t k = 1; k <= 8; ++k) {
    const std::size_t value = byte_at(in, 2 * k - 1) << 8 | byte_at(in, 2 * k);
    cuts.push_back(prefix + value % (rest + 1));
  }
  std::sort(cuts.begin(), cuts.end());  // duplicates stay: they feed empty chunks
  return cuts;
}

// Feeds the pieces in order and takes dumps after every feed, as a streaming caller does.
Parsed parse_split(std::string_view in, const std::vector<std::size_t>& cuts,
                   std::shared_ptr<parser::BodyCache> bodies = nullptr) {
  parser::DumpParser dump_parser(fuzz_limits(), std::move(bodies));
  Parsed out;
  auto take = [&] {
    for (auto& dump : dump_parser.take_dumps()) out.dumps.push_back(std::move(dump));
  };
  std::size_t from = 0;
  for (const std::size_t cut : cuts) {
    dump_parser.feed(in.substr(from, cut - from));
    take();
    from = cut;
  }
  dump_parser.feed(in.substr(from));
  dump_parser.finish();
  take();
  out.stats = dump_parser.stats();
  return out;
}

Parsed parse_whole(std::string_view in) {
  Parsed out;
  out.dumps = parser::parse_dumps(in, fuzz_limits(), &out.stats);
  return out;
}

// Everything that must not depend on the split: every dump's facts plus the stream counters.
std::string fingerprint(const Parsed& parsed) {
  std::string text;
  for (const auto& dump : parsed.dumps) text += lockwatch::model::canonical_text(dump);
  const auto& s = parsed.stats;
  text += "stream dumps=" + std::to_string(s.dumps) + " lines=" + std::to_string(s.lines) +
          " junk_lines=" + std::to_string(s.junk_lines) +
          " incomplete_dumps=" + std::to_string(s.incomplete_dumps) + "\n";
  return text;
}

std::string_view line_around(std::string_view text, std::size_t at) {
  const std::size_t begin = at == 0 ? 0 : text.rfind('\n', at - 1) + 1;  // npos + 1 == 0
  const std::size_t end = text.find('\n', at);
  return text.substr(begin, end == std::string_view::npos ? end : end - begin);
}

// Prints the first differing canonical line of each side, so a crash file explains itself.
void print_difference(std::string_view whole, std::string_view split) {
  const auto diverge = std::mismatch(whole.begin(), whole.end(), split.begin(), split.end());
  const auto at = static_cast<std::size_t>(diverge.first - whole.begin());
  const auto a = line_around(whole, at);
  const auto b = line_around(split, at);
  std::fprintf(stderr, "dump_parser_fuzzer: whole and split parses differ at byte %zu\n", at);
  std::fprintf(stderr, "  whole: %.*s\n  split: %.*s\n", static_cast<int>(a.size()), a.data(),
               static_cast<int>(b.size()), b.data());
}

// The samples of one target: the input cut at form feeds, or the input twice and then with
// one byte (chosen by the input) changed, so that bodies are reused and then differ.
std::vector<std::string> samples_of(std::string_view in) {
  std::vector<std::string> out;
  if (in.find('\f') == std::string_view::npos) {
    out.assign(2, std::string(in));
    if (!in.empty()) {
      std::string changed(in);
      changed[(byte_at(in, 1) << 8 | byte_at(in, 2)) % in.size()] ^= 0x01;
      out.push_back(std::move(changed));
    }
    return out;
  }
  for (std::size_t at = 0;;) {
    const auto ff = in.find('\f', at);
    out.emplace_back(in.substr(at, ff - at));
    if (ff == std::string_view::npos) return out;
    at = ff + 1;
  }
}

void check_with_bodies(std::string_view in) {
  auto bodies = std::make_shared<parser::BodyCache>();
  for (const auto& sample : samples_of(in)) {
    const std::string plain = fingerprint(parse_whole(sample));
    const std::string cached = fingerprint(parse_split(sample, cut_points(sample), bodies));
    if (plain != cached) {
      std::fprintf(stderr, "dump_parser_fuzzer: a parse with the body cache differs from the plain one\n");
      print_difference(plain, cached);
      __builtin_trap();
    }
  }
}

void analyze(const std::vector<ThreadDump>& dumps) {
  lockwatch::analysis::Correlator correlator;
  for (std::size_t i = 0; i < dumps.size(); ++i) correlator.add(dumps[i], static_cast<double>(i));
  const auto report = correlator.report();
  if (report.dumps.size() != dumps.size()) __builtin_trap();  // one summary per dump added
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Bytes are bytes: the parser reads them as chars, signedness is irrelevant here.
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const Parsed whole = parse_whole(in);
  const Parsed split = parse_split(in, cut_points(in));
  const std::string a = fingerprint(whole);
  const std::string b = fingerprint(split);
  if (a != b) {
    print_difference(a, b);
    __builtin_trap();
  }
  check_with_bodies(in);
  analyze(whole.dumps);
  return 0;
}
