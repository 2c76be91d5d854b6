// SPDX-License-Identifier: Apache-2.0
// The exporter's pure label logic: sanitizing values and bounding label sets to top K + "other".
#include <catch2/catch.hpp>

#include "lockwatch/exporter/label_slots.hpp"
#include "lockwatch/exporter/label_values.hpp"

using namespace lockwatch::exporter;

namespace {

const std::string fffd = "\xEF\xBF\xBD";  // U+FFFD

FoldRule lock_rule() { return FoldRule({{"monitor", "park"}, {}, {}}); }

LabelValues lock(const std::string& lock_class) { return {"monitor", lock_class, lock_class + ".run"}; }
LabelValues other_monitor() { return {"monitor", "other", "other"}; }

}  // namespace

TEST_CASE("labels: valid text passes unchanged, quotes and backslashes included", "[export]") {
  CHECK(sanitize_label_value("java.util.concurrent.locks.ReentrantLock$NonfairSync") ==
        "java.util.concurrent.locks.ReentrantLock$NonfairSync");
  CHECK(sanitize_label_value("a\"b\\c") == "a\"b\\c");  // the exposition writer escapes these
  CHECK(sanitize_label_value("Grüße.日本") == "Grüße.日本");
  CHECK(sanitize_label_value("\xF0\x9F\x94\x92") == "\xF0\x9F\x94\x92");  // 4-byte sequence
  CHECK(sanitize_label_value("").empty());
}

TEST_CASE("labels: each invalid UTF-8 byte becomes U+FFFD", "[export]") {
  CHECK(sanitize_label_value("a\xFF" "b") == "a" + fffd + "b");
  CHECK(sanitize_label_value("\xC0\xAF") == fffd + fffd);            // overlong '/'
  CHECK(sanitize_label_value("\xED\xA0\x80") == fffd + fffd + fffd);  // a surrogate
  CHECK(sanitize_label_value("x\xE2\x82") == "x" + fffd + fffd);      // cut sequence at the end
  CHECK(sanitize_label_value("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // past U+10FFFF
}

TEST_CASE("labels: control characters become U+FFFD", "[export]") {
  CHECK(sanitize_label_value("a\nb") == "a" + fffd + "b");
  CHECK(sanitize_label_value(std::string("a\0b\tc\x7F", 6)) == "a" + fffd + "b" + fffd + "c" + fffd);
  CHECK(sanitize_label_value("\xC2\x85") == fffd);  // NEL, a C1 control
}

TEST_CASE("labels: long values are cut to 200 bytes and end in an ellipsis", "[export]") {
  const std::string ellipsis = "\xE2\x80\xA6";
  CHECK(sanitize_label_value(std::string(200, 'a')) == std::string(200, 'a'));
  const auto cut = sanitize_label_value(std::string(100000, 'a'));
  CHECK(cut == std::string(197, 'a') + ellipsis);
  CHECK(cut.size() == max_label_value_bytes);
  std::string wide;
  for (int i = 0; i < 100; ++i) wide += "日";  // 3 bytes each
  const auto w = sanitize_label_value(wide);
  CHECK(w.size() <= max_label_value_bytes);
  CHECK(w == wide.substr(0, 195) + ellipsis);  // never half a character
}

TEST_CASE("labels: fold keeps the kind of lock, other labels become other", "[export]") {
  CHECK(lock_rule().fold(lock("A")) == other_monitor());
  CHECK(lock_rule().fold({"weird", "A", "s"}) == LabelValues{"other", "other", "other"});
  CHECK(lock_rule().needs_no_slot(other_monitor()));
  CHECK_FALSE(lock_rule().needs_no_slot(lock("A")));
  const FoldRule result(std::vector<std::vector<std::string>>{std::vector<std::string>{"ok", "timeout"}});
  CHECK(result.needs_no_slot({"ok"}));  // closed values are bounded by their set
  CHECK(result.fold({"bogus"}) == LabelValues{"other"});
}

TEST_CASE("labels: a closed label never shows a value outside its set", "[export]") {
  CHECK(lock_rule().normalize({"spin", "A", "s"}) == LabelValues{"other", "A", "s"});
  CHECK(lock_rule().normalize(lock("A")) == lock("A"));
  StickySlots slots(5, lock_rule());
  CHECK(slots.assign({{{"spin", "A", "s"}, 1}, {{"other", "A", "s"}, 2}}) ==
        std::map<LabelValues, std::uint64_t>{{{"other", "A", "s"}, 3}});
  const FoldRule result(std::vector<std::vector<std::string>>{std::vector<std::string>{"ok", "timeout"}});
  CHECK(cap_gauges({{{"ok"}, 1}, {{"bogus"}, 2}, {{"worse"}, 3}}, 5, result) ==
        std::map<LabelValues, std::uint64_t>{{{"ok"}, 1}, {{"other"}, 5}});
}

TEST_CASE("labels: counter slots go to the first K label sets, for good", "[export]") {
  StickySlots slots(2, lock_rule());
  // Five classes at once: the two busiest get the slots.
  auto series = slots.assign({{lock("A"), 1}, {lock("B"), 9}, {lock("C"), 4}, {lock("D"), 9}, {lock("E"), 2}});
  CHECK(series == std::map<LabelValues, std::uint64_t>{{lock("B"), 9}, {lock("D"), 9}, {other_monitor(), 7}});
  // A becomes the busiest later: it stays in "other", so "other" never drops.
  series = slots.assign({{lock("A"), 100}, {lock("B"), 10}, {lock("C"), 4}, {lock("D"), 9}, {lock("E"), 2}});
  CHECK(series == std::map<LabelValues, std::uint64_t>{{lock("B"), 10}, {lock("D"), 9}, {other_monitor(), 106}});
  CHECK(slots.owners() == std::set<LabelValues>{lock("B"), lock("D")});
}

TEST_CASE("labels: a free slot goes to the next newcomer; 'other' itself never takes one", "[export]") {
  StickySlots slots(2, lock_rule());
  CHECK(slots.assign({{other_monitor(), 5}, {lock("A"), 1}}).size() == 2);
  auto series = slots.assign({{other_monitor(), 5}, {lock("A"), 1}, {lock("B"), 1}, {lock("C"), 1}});
  CHECK(series == std::map<LabelValues, std::uint64_t>{{lock("A"), 1}, {lock("B"), 1}, {other_monitor(), 6}});
  StickySlots none(0, lock_rule());
  CHECK(none.assign({{lock("A"), 3}, {{"park", "P", "p"}, 2}}) ==
        std::map<LabelValues, std::uint64_t>{{other_monitor(), 3}, {{"park", "other", "other"}, 2}});
}

TEST_CASE("labels: gauges show the K largest of this sample and sum the rest", "[export]") {
  const std::map<LabelValues, std::uint64_t> waiters{
      {lock("A"), 1}, {lock("B"), 7}, {lock("C"), 3}, {lock("D"), 3}, {{"park", "P", "p"}, 2}};
  CHECK(cap_gauges(waiters, 2, lock_rule()) ==
        std::map<LabelValues, std::uint64_t>{{lock("B"), 7}, {lock("C"), 3}, {other_monitor(), 4}, {{"park", "other", "other"}, 2}});
  CHECK(cap_gauges(waiters, 10, lock_rule()) == waiters);
}

TEST_CASE("labels: pools are kept whole with their states, or folded whole", "[export]") {
  const FoldRule pool_rule({{}, {"BLOCKED", "RUNNABLE"}});
  const std::map<LabelValues, std::uint64_t> pools{
      {{"http-N", "BLOCKED"}, 5}, {{"http-N", "RUNNABLE"}, 5}, {{"db-N", "BLOCKED"}, 4}, {{"tiny-N", "RUNNABLE"}, 1}};
  // K=3: http-N (two label sets) fits, db-N would make three: fits too; tiny-N does not.
  CHECK(cap_gauges(pools, 3, pool_rule) ==
        std::map<LabelValues, std::uint64_t>{{{"http-N", "BLOCKED"}, 5}, {{"http-N", "RUNNABLE"}, 5},
                                             {{"db-N", "BLOCKED"}, 4}, {{"other", "RUNNABLE"}, 1}});
  // K=1: the largest pool does not fit, and nothing smaller is shown in its place.
  CHECK(cap_gauges(pools, 1, pool_rule) ==
        std::map<LabelValues, std::uint64_t>{{{"other", "BLOCKED"}, 9}, {{"other", "RUNNABLE"}, 6}});
}
