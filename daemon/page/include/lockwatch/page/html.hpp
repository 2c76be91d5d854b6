// SPDX-License-Identifier: Apache-2.0
// The pages people read: the daemon's live view at `/` and the self-contained report of
// `lockwatch analyze --format html`. The only module that writes HTML. Everything from a
// JVM (thread names, classes, frames) and from a command line is escaped here; charts,
// graphs and flame graphs are SVG drawn on the server, so neither page runs script on data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/page/view.hpp"

namespace lockwatch::page {

struct Incident {
  std::string name;        // its directory: "<UTC time>-<target>"
  std::size_t dumps = 0;
  std::uint64_t bytes = 0;
  bool summary = false;    // summary.json is there
};

struct LivePage {
  std::vector<view::Health> targets;
  std::optional<view::TargetView> selected;  // the target shown in full
  std::vector<Incident> incidents;           // newest first
  double now = 0;                            // unix seconds
  unsigned refresh_seconds = 5;              // 0: the page does not refresh itself
  std::string interval;                      // the sampling interval, as configured ("1s")
  std::string version;
};

struct ReportInput {
  std::string path;
  std::size_t dumps = 0;
};

struct ReportPage {
  std::string title;                 // what was read: a file, a directory
  std::vector<ReportInput> inputs;
  view::TargetView view;
  std::string version;
};

/// `/`: the targets and their health, the selected target's views, the incidents. Its
/// stylesheet and script are the daemon's own (/assets/...); the script only refetches this
/// page and swaps its <main>, so the page works, unrefreshed, without it.
std::string render_live(const LivePage& page);

/// One file with its stylesheet inline and no script, for a ticket: opens from disk.
std::string render_report(const ReportPage& page);

/// `/incidents/{name}/`: the files of one incident, linked.
std::string render_incident(const Incident& incident, const std::vector<std::string>& files);

std::string_view stylesheet();  // served at /assets/lockwatch.css
std::string_view script();      // served at /assets/lockwatch.js

/// Content-Security-Policy of the daemon's pages: nothing but the daemon's own script,
/// stylesheet and fetches; no inline script, no frames, no forms.
std::string live_csp();
/// The report's: no network at all, and only its own inline stylesheet (by hash). Also
/// carried in the file's <meta>, where frame-ancestors does not apply (`for_header` adds it).
std::string report_csp(bool for_header = false);

/// Text for HTML (element content and double-quoted attributes): valid UTF-8, control
/// characters shown as escapes, & < > " ' as character references.
std::string escape(std::string_view raw);

/// A URL component: every byte but unreserved ones percent-encoded.
std::string url_component(std::string_view raw);

/// Base64 of the SHA-256 of `text`, as a CSP hash source wants it.
std::string sha256_base64(std::string_view text);

}  // namespace lockwatch::page
