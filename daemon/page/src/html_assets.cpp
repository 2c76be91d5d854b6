// SPDX-License-Identifier: Apache-2.0
// The pages' stylesheet and script, written for lockwatch (no framework, no web fonts: a
// sidecar's port-forward must need nothing from the network), and their security policies.
#include <array>
#include <cstdint>

#include "lockwatch/page/html.hpp"

namespace lockwatch::page {
namespace {

constexpr std::string_view css = R"css(:root{--fg:#1d2330;--muted:#5b6474;--line:#dde2ea;--bg:#f4f6f9;--card:#fff;--accent:#0b63c5;--bad:#c62828;--ok:#2e7d32}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
header.top{display:flex;align-items:center;gap:16px;padding:10px 24px;background:#1d2330;color:#fff}
header.top h1{font-size:18px;margin:0;letter-spacing:.02em}
header.top .sub{color:#c5ccd8}
header.top .status{margin-left:auto;color:#c5ccd8;font-size:12px}
header.top button{font:inherit;font-size:12px;padding:2px 10px;border-radius:4px;border:1px solid #5b6474;background:#2b3344;color:#fff;cursor:pointer}
main{padding:16px 24px;max-width:1440px}
section.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:12px 16px;margin-bottom:16px}
h2{font-size:17px;margin:0 0 6px}
h2 small{font-weight:400;color:var(--muted);font-size:13px}
h3{margin:14px 0 6px;color:var(--muted);text-transform:uppercase;letter-spacing:.05em;font-size:12px}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:12px}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.mono,code{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px;overflow-wrap:break-word}
td.kind{white-space:nowrap}
.facts{color:var(--muted);margin:0 0 8px}
.facts b{color:var(--fg)}
.badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;font-weight:600;white-space:nowrap}
.badge.up{background:#e3f2e5;color:var(--ok)}
.badge.down{background:#fde7e7;color:var(--bad)}
.badge.dead{background:var(--bad);color:#fff}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
.grid{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px;margin-top:14px}
figure{margin:0}
figcaption{color:var(--muted);font-size:12px;margin:0 0 4px}
.scroll{overflow:auto;max-height:560px;border:1px solid var(--line);border-radius:4px;background:#fff}
.note{color:var(--muted);font-size:12px;margin:4px 0}
.alert{background:#fdecea;border:1px solid #f5c2c0;color:#8e1c1c;padding:6px 12px;border-radius:4px;margin:8px 0}
.empty{color:var(--muted);font-style:italic;padding:12px}
tr.sel td{background:#eef4fb}
a{color:var(--accent)}
footer{color:var(--muted);font-size:12px;padding:0 24px 24px}
svg{display:block}
svg text{font:11px ui-monospace,"DejaVu Sans Mono",Menlo,monospace;fill:#1d2330}
svg .axis{stroke:#9aa3b2}
svg .gridline{stroke:#eceff4}
svg text.tick{fill:#5b6474}
svg .series{fill:none;stroke-width:2}
svg .series.all{stroke:#9aa3b2;stroke-width:1.5;stroke-dasharray:4 3}
svg .node rect{fill:#fff;stroke:#9aa3b2}
svg .node.root rect{fill:#fff3e0;stroke:#e69f00}
svg .node.group rect{fill:#eef4fb;stroke:#0b63c5}
svg .node.unknown rect,svg .node.more rect{fill:#f4f4f4;stroke-dasharray:3 2}
svg .node.dead rect{fill:#fdecea;stroke:#c62828;stroke-width:2}
svg .node text.sub{fill:#5b6474}
svg .edge{fill:none;stroke:#7b8494;stroke-width:1.3}
svg .edge.dead{stroke:#c62828;stroke-width:2.2}
svg .frame rect{stroke:#fff;stroke-width:.5}
svg .frame:hover rect,svg .node:hover rect{stroke:#1d2330;stroke-width:1.5}
)css";

constexpr std::string_view js = R"js(// lockwatch's live view refreshes itself in place: it fetches this same URL (same origin, so
// TLS and basic auth apply as they did to the page) and swaps <main>. The HTML comes escaped
// from the daemon and DOMParser parses it inert; the page's policy allows no inline script.
'use strict';
(function () {
  var body = document.body;
  var period = Number(body.getAttribute('data-refresh')) * 1000;
  var status = document.getElementById('refresh-status');
  var button = document.getElementById('refresh-toggle');
  var paused = false, busy = false, timer = null, refreshes = 0;
  function show(text) { if (status) status.textContent = text; }
  function schedule() { if (!paused && !busy && timer === null) timer = setTimeout(refresh, period); }
  function swap(text) {
    var fresh = new DOMParser().parseFromString(text, 'text/html').querySelector('main');
    var old = document.querySelector('main');
    if (!fresh || !old) throw new Error('no page in the answer');
    old.replaceWith(document.adoptNode(fresh));
    refreshes += 1;
    body.setAttribute('data-refreshes', String(refreshes));
    show('updated ' + new Date().toLocaleTimeString());
  }
  function refresh() {
    timer = null;
    if (paused || busy) return;
    busy = true;
    fetch(location.href, { credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.text(); })
      .then(swap)
      .catch(function (e) { show('update failed: ' + e.message + '; retrying'); })
      .then(function () { busy = false; schedule(); });
  }
  if (!(period > 0)) {
    if (button) button.hidden = true;
    return;
  }
  if (button) button.addEventListener('click', function () {
    paused = !paused;
    button.textContent = paused ? 'resume' : 'pause';
    show(paused ? 'paused' : 'refreshes every ' + period / 1000 + ' s');
    if (paused && timer !== null) { clearTimeout(timer); timer = null; }
    schedule();
  });
  show('refreshes every ' + period / 1000 + ' s');
  schedule();
})();
)js";

// SHA-256 (FIPS 180-4), for the CSP hash of the report's inline stylesheet.
class Sha256 {
 public:
  std::array<std::uint8_t, 32> digest(std::string_view text) {
    std::string data(text);
    const std::uint64_t bits = static_cast<std::uint64_t>(text.size()) * 8;
    data.push_back(static_cast<char>(0x80));
    while (data.size() % 64 != 56) data.push_back('\0');
    for (int i = 7; i >= 0; --i) data.push_back(static_cast<char>((bits >> (i * 8)) & 0xFF));
    for (std::size_t at = 0; at < data.size(); at += 64) block(reinterpret_cast<const unsigned char*>(data.data() + at));
    std::array<std::uint8_t, 32> out{};
    for (std::size_t i = 0; i < 32; ++i) out[i] = static_cast<std::uint8_t>(h_[i / 4] >> (24 - 8 * (i % 4)));
    return out;
  }

 private:
  static std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void block(const unsigned char* p) {
    static constexpr std::array<std::uint32_t, 64> k = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
        0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
        0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
        0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
        0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
        0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::array<std::uint32_t, 64> w{};
    for (std::size_t i = 0; i < 16; ++i)
      w[i] = static_cast<std::uint32_t>(p[4 * i]) << 24 | static_cast<std::uint32_t>(p[4 * i + 1]) << 16 |
             static_cast<std::uint32_t>(p[4 * i + 2]) << 8 | p[4 * i + 3];
    for (std::size_t i = 16; i < 64; ++i) {
      const auto s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const auto s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, h] = h_;
    for (std::size_t i = 0; i < 64; ++i) {
      const auto t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const auto t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    const std::array<std::uint32_t, 8> add = {a, b, c, d, e, f, g, h};
    for (std::size_t i = 0; i < 8; ++i) h_[i] += add[i];
  }

  std::array<std::uint32_t, 8> h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
};

std::string base64(const std::array<std::uint8_t, 32>& bytes) {
  static constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const auto at = [&](std::size_t k) { return k < bytes.size() ? static_cast<std::uint32_t>(bytes[k]) : 0u; };
    const std::uint32_t n = at(i) << 16 | at(i + 1) << 8 | at(i + 2);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? alphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? alphabet[n & 63] : '=';
  }
  return out;
}

}  // namespace

std::string_view stylesheet() { return css; }
std::string_view script() { return js; }

std::string sha256_base64(std::string_view text) { return base64(Sha256{}.digest(text)); }

std::string live_csp() {
  return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
         "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
}

std::string report_csp(bool for_header) {
  static const std::string hash = sha256_base64(css);
  return "default-src 'none'; style-src 'sha256-" + hash + "'; base-uri 'none'; form-action 'none'" +
         (for_header ? "; frame-ancestors 'none'" : "");
}

}  // namespace lockwatch::page
