// SPDX-License-Identifier: Apache-2.0
// The main config file's grammar: YAML -> Config, every key by its dotted path, unknown keys
// with a suggestion. The value readers and positions it shares with the web config file's
// grammar (web_config_loader.cpp) are in yaml_reader.hpp.
#include <algorithm>
#include <string>
#include <optional>

#include "lockwatch/config/load.hpp"
#include "suggest.hpp"
#include "yaml_reader.hpp"

namespace lockwatch::config {
namespace {

// The shared reading, by name (yaml_reader.hpp).
using detail::Item;
using detail::Reader;
using detail::got;
using detail::join;
using detail::last_part;
using detail::position_of;

class Loader : public Reader {
 public:
  using Reader::Reader;

  Config config;

  void locks(const Item& item, LockPolicy& out);
  template <class T, class ReadOne>
  void list(const Item& item, std::string_view expected, std::vector<T>& out, ReadOne read_one);

  // --- the document's structure ---

  void document(const std::vector<YAML::Node>& documents);
  void mapping(const YAML::Node& node, const std::string& section);
  LoadResult finish();

 private:
  void key_value(const Item& item);
  void section(const Item& item);
  void dotted_key(const Item& item);
  void unknown_key(const Item& item);
};

void Loader::locks(const Item& item, LockPolicy& out) {
  constexpr std::string_view expected = "never, on_demand or {every: N}";
  if (item.value.IsScalar() && (item.value.Scalar() == "never" || item.value.Scalar() == "on_demand")) {
    out = {item.value.Scalar() == "never" ? LockPolicy::Mode::never : LockPolicy::Mode::on_demand, 1};
    return;
  }
  if (!item.value.IsMap() || item.value.size() != 1 || item.value.begin()->first.as<std::string>("") != "every")
    return error(item, "expected " + std::string(expected) + ", " + got(item.value));
  const auto every = item.value.begin();
  Item n{every->first, every->second, item.path + ".every"};
  positions[n.path] = n.where();
  std::uint32_t value = 0;
  count(n, detail::limits::lock_every, value);
  if (value > 0) out = {LockPolicy::Mode::every, value};
}

template <class T, class ReadOne>
void Loader::list(const Item& item, std::string_view expected, std::vector<T>& out, ReadOne read_one) {
  if (item.value.IsNull()) return out.clear();
  if (!item.value.IsSequence()) return error(item, "expected " + std::string(expected) + ", " + got(item.value));
  // All or nothing: a list with a bad element stays at its default, so that the indexes
  // the later checks report are the file's indexes.
  std::vector<T> elements;
  for (std::size_t i = 0; i < item.value.size(); ++i) {
    Item element{item.key, item.value[i], item.path + "[" + std::to_string(i) + "]"};
    positions[element.path] = element.where();
    if (auto v = read_one(element)) elements.push_back(std::move(*v));
  }
  if (elements.size() == item.value.size()) out = std::move(elements);
}

std::optional<int> read_pid(Loader& l, const Item& item) {
  int pid = 0;
  l.count(item, detail::limits::pid, pid);
  return pid > 0 ? std::optional<int>(pid) : std::nullopt;
}

std::optional<std::string> read_glob(Loader& l, const Item& item) {
  if (item.value.IsScalar()) return item.value.Scalar();
  l.error(item, "expected a thread-name glob, " + got(item.value));
  return std::nullopt;
}

struct Key {
  std::string_view path;
  void (*read)(Loader&, const Item&);
};

// Every key the file may set, by dotted path: a path with a dot lives in the section before it.
constexpr Key keys[] = {
    {"listen", [](Loader& l, const Item& i) { l.text(i, l.config.listen); }},
    {"interval", [](Loader& l, const Item& i) { l.duration(i, l.config.interval); }},
    {"timeout", [](Loader& l, const Item& i) { l.duration(i, l.config.timeout); }},
    {"backend", [](Loader& l, const Item& i) { l.choice(i, l.config.backend, parse_backend, "attach, jstack"); }},
    {"jstack_path", [](Loader& l, const Item& i) { l.text(i, l.config.jstack_path); }},
    {"dump_format",
     [](Loader& l, const Item& i) { l.choice(i, l.config.dump_format, parse_dump_format, "auto, print, json"); }},
    {"max_concurrent_dumps",
     [](Loader& l, const Item& i) { l.count(i, detail::limits::max_concurrent_dumps, l.config.max_concurrent_dumps); }},
    {"locks", [](Loader& l, const Item& i) { l.locks(i, l.config.locks); }},
    {"attach.as", [](Loader& l, const Item& i) { l.choice(i, l.config.attach.as, parse_attach_as, "self, target"); }},
    {"attach.idle_uid", [](Loader& l, const Item& i) { l.count(i, detail::limits::idle_id, l.config.attach.idle_uid); }},
    {"attach.idle_gid", [](Loader& l, const Item& i) { l.count(i, detail::limits::idle_id, l.config.attach.idle_gid); }},
    {"limits.max_reply_bytes", [](Loader& l, const Item& i) { l.size(i, l.config.limits.max_reply_bytes); }},
    {"limits.max_threads", [](Loader& l, const Item& i) { l.count(i, detail::limits::max_threads, l.config.limits.max_threads); }},
    {"limits.max_line_bytes", [](Loader& l, const Item& i) { l.size(i, l.config.limits.max_line_bytes); }},
    {"targets.pids",
     [](Loader& l, const Item& i) {
       l.list(i, "a list of process ids like [1234, 5678]", l.config.targets.pids,
              [&l](const Item& e) { return read_pid(l, e); });
     }},
    {"targets.match", [](Loader& l, const Item& i) { l.text(i, l.config.targets.match); }},
    {"targets.rescan", [](Loader& l, const Item& i) { l.duration(i, l.config.targets.rescan); }},
    {"targets.max", [](Loader& l, const Item& i) { l.count(i, detail::limits::max_targets, l.config.targets.max); }},
    {"targets.kubernetes.pod_logs", [](Loader& l, const Item& i) { l.text(i, l.config.targets.kubernetes.pod_logs); }},
    {"targets.kubernetes.container_logs",
     [](Loader& l, const Item& i) { l.text(i, l.config.targets.kubernetes.container_logs); }},
    {"ring.samples", [](Loader& l, const Item& i) { l.count(i, detail::limits::ring_samples, l.config.ring.samples); }},
    {"ring.max_bytes", [](Loader& l, const Item& i) { l.size(i, l.config.ring.max_bytes); }},
    {"analysis.top_k", [](Loader& l, const Item& i) { l.count(i, detail::limits::top_k, l.config.analysis.top_k); }},
    {"analysis.stuck_samples",
     [](Loader& l, const Item& i) { l.count(i, detail::limits::stuck_samples, l.config.analysis.stuck_samples); }},
    {"analysis.neighbour_window",
     [](Loader& l, const Item& i) { l.count(i, detail::limits::neighbour_window, l.config.analysis.neighbour_window); }},
    {"analysis.event_loop_pools",
     [](Loader& l, const Item& i) {
       l.list(i, "a list of thread-name globs like [\"reactor-http-nio-*\"]", l.config.analysis.event_loop_pools,
              [&l](const Item& e) { return read_glob(l, e); });
     }},
    {"analysis.max_bytes", [](Loader& l, const Item& i) { l.size(i, l.config.analysis.max_bytes); }},
    {"incidents.enabled", [](Loader& l, const Item& i) { l.flag(i, l.config.incidents.enabled); }},
    {"incidents.directory", [](Loader& l, const Item& i) { l.text(i, l.config.incidents.directory); }},
    {"incidents.blocked_threshold",
     [](Loader& l, const Item& i) {
       l.count(i, detail::limits::blocked_threshold, l.config.incidents.blocked_threshold);
     }},
    {"incidents.park_threshold",
     [](Loader& l, const Item& i) { l.count(i, detail::limits::blocked_threshold, l.config.incidents.park_threshold); }},
    {"incidents.resource_threshold",
     [](Loader& l, const Item& i) { l.count(i, detail::limits::blocked_threshold, l.config.incidents.resource_threshold); }},
    {"incidents.contended_enters_per_second",
     [](Loader& l, const Item& i) {
       l.count(i, detail::limits::contended_enters_per_second, l.config.incidents.contended_enters_per_second);
     }},
    {"incidents.burst_count",
     [](Loader& l, const Item& i) { l.count(i, detail::limits::burst_count, l.config.incidents.burst_count); }},
    {"incidents.burst_interval", [](Loader& l, const Item& i) { l.duration(i, l.config.incidents.burst_interval); }},
    {"incidents.min_interval", [](Loader& l, const Item& i) { l.duration(i, l.config.incidents.min_interval); }},
    {"incidents.max_bytes", [](Loader& l, const Item& i) { l.size(i, l.config.incidents.max_bytes); }},
    {"http.max_connections",
     [](Loader& l, const Item& i) { l.count(i, detail::limits::max_connections, l.config.http.max_connections); }},
    {"http.max_connections_per_client",
     [](Loader& l, const Item& i) { l.count(i, detail::limits::max_connections, l.config.http.max_connections_per_client); }},
    {"http.request_timeout", [](Loader& l, const Item& i) { l.duration(i, l.config.http.request_timeout); }},
    {"http.header_timeout", [](Loader& l, const Item& i) { l.duration(i, l.config.http.header_timeout); }},
    {"web_config_file", [](Loader& l, const Item& i) { l.text(i, l.config.web_config_file); }},
    {"log.level",
     [](Loader& l, const Item& i) {
       l.choice(i, l.config.log.level, parse_log_level, "trace, debug, info, warn, error, off");
     }},
};

std::string parent_of(std::string_view path) {
  const auto dot = path.rfind('.');
  return std::string(dot == std::string_view::npos ? std::string_view{} : path.substr(0, dot));
}

// The names a mapping at `section` may hold ("" is the top level), in the order of `keys`.
std::vector<std::string_view> names_in(const std::string& section) {
  std::vector<std::string_view> names;
  const std::string prefix = section.empty() ? "" : section + ".";
  for (const auto& key : keys) {
    if (!key.path.starts_with(prefix)) continue;
    auto rest = key.path.substr(prefix.size());
    rest = rest.substr(0, rest.find('.'));
    if (std::find(names.begin(), names.end(), rest) == names.end()) names.push_back(rest);
  }
  return names;
}

bool is_section(const std::string& path) {
  return std::any_of(std::begin(keys), std::end(keys), [&](const Key& k) { return k.path.starts_with(path + "."); });
}

// A key put in the wrong section ("samples" at the top level): where it belongs ("'ring.samples'").
// Ignoring case, like the near-miss suggestions.
std::string belongs_elsewhere(std::string_view name) {
  std::string out;
  for (const auto& key : keys)
    if (detail::edit_distance(name, last_part(key.path)) == 0) out += (out.empty() ? "'" : "' or '") + std::string(key.path);
  return out.empty() ? out : out + "'";
}

void Loader::document(const std::vector<YAML::Node>& documents) {
  if (const auto* top = single_mapping(documents, "config file")) mapping(*top, "");
}

void Loader::mapping(const YAML::Node& node, const std::string& section_path) {
  entries(node, section_path, [this](const Item& item) { key_value(item); });
}

void Loader::key_value(const Item& item) {
  // "ring.samples: 5" would otherwise be read as if nested: one spelling per key.
  if (item.key.Scalar().find('.') != std::string::npos) return dotted_key(item);
  for (const auto& key : keys)
    if (key.path == item.path) return key.read(*this, item);
  if (is_section(item.path)) return section(item);
  unknown_key(item);
}

void Loader::section(const Item& item) {
  if (item.value.IsNull()) return;  // "ring:" with nothing under it: all defaults
  if (!item.value.IsMap())
    return error(item, "expected a mapping with keys " + join(names_in(item.path)) + ", " + got(item.value));
  mapping(item.value, item.path);
}

void Loader::dotted_key(const Item& item) {
  const auto& name = item.key.Scalar();
  const auto dot = name.find('.');
  error(position_of(item.key.Mark()), "unknown key '" + item.path + "' (write '" + name.substr(0, dot) + ":' with '" +
                                          name.substr(dot + 1) + ":' indented below it)");
}

void Loader::unknown_key(const Item& item) {
  const auto section_path = parent_of(item.path);
  const auto here = names_in(section_path);
  std::string message = "unknown key '" + item.path + "'";
  if (auto near = detail::closest(last_part(item.path), here))
    message += " (did you mean '" + (section_path.empty() ? "" : section_path + ".") + std::string(*near) + "'?)";
  else if (auto elsewhere = belongs_elsewhere(last_part(item.path)); !elsewhere.empty())
    message += " (did you mean " + elsewhere + "?)";
  else
    message += "; known keys here: " + join(here);
  error(position_of(item.key.Mark()), message);
}

LoadResult Loader::finish() {
  auto errors = sorted_errors(detail::check_config(config));
  if (!errors.empty()) return {std::nullopt, std::move(errors)};
  return {std::move(config), {}};
}

}  // namespace

LoadResult load_config_text(std::string_view text, std::string_view name) {
  return load_yaml<LoadResult>(Loader(name), text, name);
}

}  // namespace lockwatch::config
