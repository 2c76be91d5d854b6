// SPDX-License-Identifier: Apache-2.0
// YAML text -> Config. The only file that includes yaml-cpp: its types stay out of every header.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <string>
#include <sstream>
#include <optional>

#include "checks.hpp"
#include "lockwatch/config/load.hpp"
#include "suggest.hpp"
#include "units_detail.hpp"

namespace lockwatch::config {
namespace {

struct Position {
  int line = 0;
  int column = 0;
};

Position position_of(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line + 1, mark.column + 1};
}

/// One `key: value` of a mapping, with the dotted path of the key ("ring.samples").
struct Item {
  YAML::Node key;
  YAML::Node value;
  std::string path;

  // An empty value has the mark of whatever follows it: point at its key instead.
  Position where() const { return position_of(value.IsNull() ? key.Mark() : value.Mark()); }
};

std::string got(const YAML::Node& node) {
  if (node.IsNull()) return "got nothing";
  if (node.IsSequence()) return "got a list";
  if (node.IsMap()) return "got a mapping";
  return "got '" + node.Scalar() + "'";
}

std::optional<bool> parse_bool(std::string_view text) {
  for (std::string_view yes : {"true", "True", "TRUE", "yes", "Yes", "on", "On"})
    if (text == yes) return true;
  for (std::string_view no : {"false", "False", "FALSE", "no", "No", "off", "Off"})
    if (text == no) return false;
  return std::nullopt;
}

std::string unit_message(const detail::UnitParse& parsed, std::string_view text, std::string_view noun,
                         std::string_view units) {
  const std::string quoted = "'" + std::string(text) + "'";
  switch (parsed.failure) {
    case detail::UnitFailure::negative: return "a " + std::string(noun) + " cannot be negative, got " + quoted;
    case detail::UnitFailure::fraction: return "fractions are not supported, use a smaller unit; got " + quoted;
    case detail::UnitFailure::unknown_unit:
      return "unknown unit '" + std::string(parsed.unit) + "' in " + quoted + " (use " + std::string(units) + ")";
    case detail::UnitFailure::too_large: return quoted + " is too large";
    default: return "expected a " + std::string(noun) + " like " + std::string(units) + ", got " + quoted;
  }
}

// What every loader shares: errors with positions, readers of one value, and mappings
// walked with their duplicate keys reported.
class Reader {
 public:
  explicit Reader(std::string_view file) : file_(file) {}

  void error(Position at, std::string message) {
    errors_.push_back({file_, at.line, at.column, std::move(message)});
  }
  void error(const Item& item, const std::string& message) { error(item.where(), item.path + ": " + message); }

  // --- readers of one value; on a bad value they report it and leave the default ---

  const std::string* scalar(const Item& item, std::string_view expected) {
    if (item.value.IsScalar()) return &item.value.Scalar();
    error(item, "expected " + std::string(expected) + ", " + got(item.value));
    return nullptr;
  }

  void text(const Item& item, std::string& out) {
    if (item.value.IsNull()) return out.clear();
    if (auto s = scalar(item, "a string")) out = *s;
  }

  void flag(const Item& item, bool& out) {
    const auto* s = scalar(item, "true or false");
    if (!s) return;
    if (auto b = parse_bool(*s))
      out = *b;
    else
      error(item, "expected true or false, got '" + *s + "'");
  }

  void duration(const Item& item, std::chrono::milliseconds& out) {
    constexpr std::string_view units = "200ms, 1s, 1m, 1h";
    const auto* s = scalar(item, "a duration like " + std::string(units));
    if (!s) return;
    const auto parsed = detail::parse_duration_ms(*s);
    if (parsed.failure != detail::UnitFailure::none) return error(item, unit_message(parsed, *s, "duration", units));
    out = std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(parsed.value));
  }

  void size(const Item& item, std::uint64_t& out) {
    constexpr std::string_view units = "512KiB, 32MiB, 1GiB or plain bytes";
    const auto* s = scalar(item, "a size like " + std::string(units));
    if (!s) return;
    const auto parsed = detail::parse_size_bytes(*s);
    if (parsed.failure != detail::UnitFailure::none) return error(item, unit_message(parsed, *s, "size", units));
    out = parsed.value;
  }

  template <class T>
  void count(const Item& item, detail::Range range, T& out) {
    const auto* s = scalar(item, "a whole number");
    if (!s) return;
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), value);
    if (ptr != s->data() + s->size() || ec == std::errc::invalid_argument)
      return error(item, "expected a whole number, got '" + *s + "'");
    if (ec != std::errc{} || value < range.min || value > range.max)
      return error(item, detail::range_message(*s, range));
    out = static_cast<T>(value);
  }

  template <class E>
  void choice(const Item& item, E& out, std::optional<E> (*parse)(std::string_view), std::string_view allowed) {
    const auto* s = scalar(item, "one of " + std::string(allowed));
    if (!s) return;
    if (auto v = parse(*s))
      out = *v;
    else
      error(item, "expected one of " + std::string(allowed) + ", got '" + *s + "'");
  }

  /// Calls `each` for every `key: value` of `node` (a mapping at `section_path`), after
  /// reporting keys that are not names and keys given twice.
  template <class Each>
  void entries(const YAML::Node& node, const std::string& section_path, Each each) {
    std::map<std::string, int> seen;  // key -> line, for duplicates
    for (const auto& entry : node) {
      const auto at = position_of(entry.first.Mark());
      if (!entry.first.IsScalar()) {
        error(at, "expected a key name, " + got(entry.first));
        continue;
      }
      const auto& name = entry.first.Scalar();
      Item item{entry.first, entry.second, section_path.empty() ? name : section_path + "." + name};
      if (auto [first, fresh] = seen.emplace(name, at.line); !fresh) {
        error(at, "duplicate key '" + item.path + "' (first set on line " + std::to_string(first->second) + ")");
        continue;
      }
      positions[item.path] = item.where();
      each(item);
    }
  }

  /// A file's documents: the first if it is a mapping, else nothing (and an error).
  const YAML::Node* single_mapping(const std::vector<YAML::Node>& documents, std::string_view what);

  /// The cross-setting problems, at the first of their keys the file sets; then every error
  /// in file order.
  std::vector<ConfigError> sorted_errors(std::vector<detail::Problem> problems);

  std::map<std::string, Position> positions;  // where the file sets each key path

 private:
  std::string file_;
  std::vector<ConfigError> errors_;
};

const YAML::Node* Reader::single_mapping(const std::vector<YAML::Node>& documents, std::string_view what) {
  for (std::size_t i = 1; i < documents.size(); ++i)
    if (!documents[i].IsNull())
      error(position_of(documents[i].Mark()), "a " + std::string(what) + " holds one YAML document; remove the '---' before this one");
  if (documents.empty() || documents[0].IsNull()) return nullptr;
  if (!documents[0].IsMap()) {
    const auto at = position_of(documents[0].Mark());
    error(at.line > 0 ? at : Position{1, 1}, "expected settings as 'key: value' lines, " + got(documents[0]));
    return nullptr;
  }
  return &documents[0];
}

std::vector<ConfigError> Reader::sorted_errors(std::vector<detail::Problem> problems) {
  for (auto& problem : problems) {
    Position at;
    for (const auto& key : problem.keys)
      if (auto it = positions.find(key); it != positions.end() && at.line == 0) at = it->second;
    error(at, problem.keys.front() + ": " + problem.message);
  }
  std::stable_sort(errors_.begin(), errors_.end(), [](const ConfigError& a, const ConfigError& b) {
    return std::pair(a.line, a.column) < std::pair(b.line, b.column);
  });
  return std::move(errors_);
}

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

std::string_view last_part(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
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

std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (auto name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
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

// Keys of node_exporter's web config that lockwatch does not implement. They are refused
// rather than ignored: a file that restricts client SANs or ciphers must not leave the
// endpoint more open than it says.
constexpr std::string_view unsupported_web_keys[] = {
    "http_server_config", "rate_limit",    "cert",          "key", "client_ca", "client_allowed_sans",
    "max_version",        "cipher_suites", "curve_preferences", "prefer_server_cipher_suites"};
constexpr std::string_view web_top_keys[] = {"tls_server_config", "basic_auth_users"};
constexpr std::string_view tls_keys[] = {"cert_file", "key_file", "min_version", "client_ca_file", "client_auth_type"};

// The web config file (`--web.config.file`): node_exporter's format, the part lockwatch serves.
class WebLoader : public Reader {
 public:
  using Reader::Reader;

  WebSettings web;

  void document(const std::vector<YAML::Node>& documents);
  WebLoadResult finish();

 private:
  void top_key(const Item& item);
  void tls(const Item& item);
  void tls_key(const Item& item, TlsServerSettings& out);
  void users(const Item& item);
  void unknown(const Item& item, const std::vector<std::string_view>& known);
};

void WebLoader::document(const std::vector<YAML::Node>& documents) {
  if (const auto* top = single_mapping(documents, "web config file"))
    entries(*top, "", [this](const Item& item) { top_key(item); });
}

void WebLoader::top_key(const Item& item) {
  if (item.path == "tls_server_config") return tls(item);
  if (item.path == "basic_auth_users") return users(item);
  unknown(item, {std::begin(web_top_keys), std::end(web_top_keys)});
}

// An empty section means plain HTTP, as in node_exporter; any key in it asks for TLS.
void WebLoader::tls(const Item& item) {
  if (item.value.IsNull()) return;
  if (!item.value.IsMap()) return error(item, "expected a mapping with keys " + join({std::begin(tls_keys), std::end(tls_keys)}) + ", " + got(item.value));
  if (item.value.size() == 0) return;
  auto& out = web.tls.emplace();
  entries(item.value, item.path, [this, &out](const Item& key) { tls_key(key, out); });
}

void WebLoader::tls_key(const Item& item, TlsServerSettings& out) {
  const auto name = last_part(item.path);
  if (name == "cert_file") return text(item, out.cert_file);
  if (name == "key_file") return text(item, out.key_file);
  if (name == "client_ca_file") return text(item, out.client_ca_file);
  if (name == "min_version") return choice(item, out.min_version, parse_tls_version, "TLS12, TLS13");
  if (name == "client_auth_type") {
    if (item.value.IsNull()) return void(out.client_auth = ClientAuth::none);
    return choice(item, out.client_auth, parse_client_auth, "\"\", NoClientCert, RequireAndVerifyClientCert");
  }
  unknown(item, {std::begin(tls_keys), std::end(tls_keys)});
}

void WebLoader::users(const Item& item) {
  if (item.value.IsNull()) return;
  if (!item.value.IsMap()) return error(item, "expected a mapping of user names to bcrypt hashes, " + got(item.value));
  entries(item.value, item.path, [this](const Item& user) {
    if (const auto* hash = scalar(user, "a bcrypt hash")) web.basic_auth_users[user.key.Scalar()] = *hash;
  });
}

void WebLoader::unknown(const Item& item, const std::vector<std::string_view>& known) {
  const auto name = last_part(item.path);
  std::string message = "unknown key '" + item.path + "'";
  if (std::find(std::begin(unsupported_web_keys), std::end(unsupported_web_keys), name) != std::end(unsupported_web_keys))
    message = "'" + item.path + "' is not supported by lockwatch; it reads " + join(known) + " here";
  else if (auto near = detail::closest(name, known))
    message += " (did you mean '" + std::string(*near) + "'?)";
  else
    message += "; known keys here: " + join(known);
  error(position_of(item.key.Mark()), message);
}

WebLoadResult WebLoader::finish() {
  auto errors = sorted_errors(detail::check_web(web));
  if (!errors.empty()) return {std::nullopt, std::move(errors)};
  return {std::move(web), {}};
}

// yaml-cpp 0.7's LoadAll loops forever, adding a null document per turn until memory runs
// out, when a document begins with a token no node can begin with (a stray ',': upstream
// issue #1040, fixed after 0.8.0). Such a document consumes nothing, so the next one begins
// at the same mark: this pass over the parser's events finds it before LoadAll runs.
class StuckDocumentFinder final : public YAML::EventHandler {
 public:
  std::optional<YAML::Mark> stuck_at;

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (last_start_ && last_start_->pos == mark.pos) stuck_at = mark;
    last_start_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  std::optional<YAML::Mark> last_start_;
};

// Where LoadAll would never return from; throws what LoadAll would throw on a syntax error.
std::optional<YAML::Mark> stuck_document(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  StuckDocumentFinder finder;
  while (!finder.stuck_at && parser.HandleNextDocument(finder)) {
  }
  return finder.stuck_at;
}

// yaml-cpp may read past the end of the text before it gives up (an escape such as "\x" or
// "\U" cut short by the end of the file) and report a column beyond the last character.
// Brought back to just past the end of its line, so FILE:LINE:COL always points into the
// file; only for text yaml-cpp reads as UTF-8 byte by byte (a NUL byte or a 0xFE/0xFF first
// byte may make it UTF-16 or UTF-32, whose columns are not bytes).
Position inside_text(Position at, std::string_view text) {
  const bool utf8 = text.find('\0') == std::string_view::npos &&
                    (text.empty() || (text.front() != '\xfe' && text.front() != '\xff'));
  if (!utf8 || at.line < 1) return at;
  std::size_t begin = 0;
  for (int line = 1; line < at.line; ++line) {
    begin = text.find('\n', begin);
    if (begin == std::string_view::npos) return at;
    ++begin;
  }
  const auto end = std::min(text.find('\n', begin), text.size());
  const std::size_t bom = begin == 0 && text.starts_with("\xef\xbb\xbf") ? 3 : 0;  // not a column
  at.column = std::min(at.column, static_cast<int>(end - begin - bom) + 1);
  return at;
}


// yaml-cpp stops at its first syntax error: nothing after it can be checked.
template <class Result, class AnyLoader>
Result load_with(AnyLoader loader, std::string_view text, std::string_view name) {
  const std::string yaml(text);
  try {
    if (const auto stuck = stuck_document(yaml)) {
      const auto at = position_of(*stuck);
      return {std::nullopt,
              {{std::string(name), at.line, at.column, "invalid YAML: no value can start here (a ',' outside [] or {}?)"}}};
    }
    loader.document(YAML::LoadAll(yaml));
  } catch (const YAML::Exception& e) {
    const auto at = inside_text(position_of(e.mark), text);
    return {std::nullopt, {{std::string(name), at.line, at.column, "invalid YAML: " + e.msg}}};
  }
  return loader.finish();
}

}  // namespace

LoadResult load_config_text(std::string_view text, std::string_view name) {
  return load_with<LoadResult>(Loader(name), text, name);
}

WebLoadResult load_web_config_text(std::string_view text, std::string_view name) {
  return load_with<WebLoadResult>(WebLoader(name), text, name);
}

}  // namespace lockwatch::config
