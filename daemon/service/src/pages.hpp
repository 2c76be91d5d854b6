// SPDX-License-Identifier: Apache-2.0
// What the daemon's pages take from its state (api.cpp registers their routes): a target's
// health and view, the incident directories. The views themselves are lockwatch::view's,
// the HTML lockwatch::page's.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon_impl.hpp"
#include "lockwatch/http/message.hpp"
#include "lockwatch/page/html.hpp"
#include "lockwatch/page/view.hpp"

namespace lockwatch::service::pages {

/// Taken under the target's mutex, so it holds only what is quick to read.
view::Health health(const Watched& target);

/// What a target's view needs from its state, copied under its mutex: the correlator's
/// window and the text of the newest samples (the correlator keeps no stacks).
struct Snapshot {
  std::string label;
  view::Window window;
  std::vector<std::string> texts;  // oldest first
};
Snapshot snapshot(const Watched& target);

/// Parses the snapshot's dumps and builds the view: done after the mutex is released.
view::TargetView target_view(Snapshot snapshot);

/// The incidents below `directory`, newest first (at most `max`).
std::vector<page::Incident> incidents(const std::filesystem::path& directory, std::size_t max = 50);

/// GET /incidents/{name}/ and /incidents/{name}/{file}: the listing, a file as written, or
/// report.html - the same page as `lockwatch analyze --format html` of the directory. Names
/// are checked against what is on disk: nothing outside `directory` is ever read.
http::Response incident_response(const std::filesystem::path& directory, std::string_view name, std::string_view file,
                                 const analysis::CorrelatorOptions& options, const std::string& version);

/// GET /: every target's health and the view of one - `?target=NAME`, else the one with
/// most threads waiting now. `?refresh=N` sets the page's refresh period (0: none; default
/// 5 s). Runs on the API thread: it takes each target's mutex in turn.
struct LiveSettings {
  std::filesystem::path incident_directory;
  std::string interval;
  std::string version;
};
http::Response live_page(const std::vector<std::shared_ptr<Watched>>& targets, const http::Request& request,
                         const LiveSettings& settings);

/// An HTML page with its Content-Security-Policy.
http::Response html_response(std::string html, std::string csp);

}  // namespace lockwatch::service::pages
