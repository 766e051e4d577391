#include "cli/plan_report_html.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ferrite::cli {
namespace {

// Chart geometry, in SVG user units (CSS pixels at 100%).
constexpr double kChartWidth = 960;
constexpr double kArenaHeight = 360;
constexpr double kMarginLeft = 90;
constexpr double kMarginRight = 20;
constexpr double kMarginTop = 16;
constexpr double kMarginBottom = 36;

struct Kind {
  const char* css;    // class and colour key
  const char* label;  // legend text
};

// Resource kinds of the plan's memory summary, in display order.
constexpr std::array<std::pair<std::string_view, Kind>, 4> kKinds{{
    {"static", {"weights", "weights"}},
    {"state", {"state", "KV cache and states"}},
    {"activation", {"activation", "activations"}},
    {"workspace", {"workspace", "workspaces"}},
}};

constexpr std::string_view kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:22px;margin:0 0 12px}h2{font-size:18px;margin:28px 0 8px}
code,.id{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px}
table{border-collapse:collapse;font-size:13px;max-width:100%}
th,td{border:1px solid #d5d9e2;padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#eef1f6}
#summary th{width:190px}
tr.fallback td{background:#fff1cc}
tr.fallback td.provider{font-weight:600;color:#8a4b00}
.rejected{color:#6b7280;font-size:12px}
.legend span{display:inline-block;margin-right:16px;font-size:13px}
.swatch{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
.weights{fill:#4c78a8;background:#4c78a8}.state{fill:#f58518;background:#f58518}
.activation{fill:#54a24b;background:#54a24b}.workspace{fill:#b279a2;background:#b279a2}
svg text{font-size:11px;fill:#1d2330}
rect.buffer{stroke:#1d2330;stroke-width:0.4}
line.peak{stroke:#c0392b;stroke-width:1.5}
line.load{stroke:#1f6feb;stroke-width:1.5;stroke-dasharray:6 4}
line.axis{stroke:#1d2330;stroke-width:1}
.note{color:#4b5563;font-size:13px;max-width:960px}
)";

std::string bytes_text(uint64_t bytes) { return html_escape(human_bytes(bytes)); }

double fraction(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

// A stable, distinguishable fill per buffer: golden-angle hues.
std::string buffer_fill(size_t index) {
  const double hue = std::fmod(static_cast<double>(index) * 137.508, 360.0);
  return fmt::format("hsl({:.1f},62%,{}%)", hue, index % 2 == 0 ? 62 : 72);
}

void append_summary(std::string& out, const PlanExplanation& e) {
  std::vector<std::string> per_provider;
  for (const auto& [provider, count] : e.nodes_per_provider) {
    per_provider.push_back(fmt::format("<code>{}</code> {}", html_escape(provider), count));
  }
  out += "<section id=\"summary\"><h2>Summary</h2><table>\n";
  auto row = [&](std::string_view head, const std::string& value) {
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", head, value);
  };
  row("plan", fmt::format("<span class=\"id\">{}</span>", html_escape(e.plan_id)));
  row("family", fmt::format("<code>{}</code>", html_escape(e.family_id)));
  row("device", fmt::format("<code>{}</code>", html_escape(e.device_id)));
  row("policy", fmt::format("<code>{}</code>", html_escape(e.policy)));
  row("scheduled tokens", fmt::format("up to {} per step", e.maximum_scheduled_tokens));
  row("nodes", fmt::format("{}: {}", e.nodes.size(), fmt::join(per_provider, ", ")));
  row("fallbacks", fmt::format("{}", e.fallbacks));
  row("memory", fmt::format("{} of {} usable ({:.4f}%) · static {} · minimum runnable {}",
                            bytes_text(e.total_resource_bytes), bytes_text(e.usable_capacity_bytes),
                            100.0 * fraction(e.total_resource_bytes, e.usable_capacity_bytes),
                            bytes_text(e.static_bytes), bytes_text(e.minimum_runnable_bytes)));
  out += "</table></section>\n";
}

void append_memory(std::string& out, const PlanExplanation& e, const MemoryFit* fit) {
  std::map<std::string_view, uint64_t> by_kind;
  for (const auto& r : e.resources) by_kind[r.kind] += r.size_bytes;  // sums checked in explain_plan
  out += "<section id=\"memory\"><h2>Memory by kind</h2>\n";
  out += "<div class=\"legend\">";
  for (const auto& [kind, style] : kKinds) {
    out += fmt::format("<span><i class=\"swatch {}\"></i>{}: {}</span>", style.css, style.label,
                       bytes_text(by_kind[kind]));
  }
  out += "</div>\n";
  const double plot = kChartWidth - kMarginLeft - kMarginRight;
  out += fmt::format(
      "<svg id=\"memory-chart\" width=\"{0}\" height=\"44\" viewBox=\"0 0 {0} 44\" "
      "role=\"img\" aria-label=\"memory of the plan by kind\">\n",
      kChartWidth);
  out += fmt::format("<text x=\"0\" y=\"22\">plan {}</text>\n", bytes_text(e.total_resource_bytes));
  double x = kMarginLeft;
  for (const auto& [kind, style] : kKinds) {
    const double width = plot * fraction(by_kind[kind], e.total_resource_bytes);
    if (width <= 0) continue;
    out += fmt::format(
        "<rect class=\"kind {0}\" x=\"{1:.2f}\" y=\"8\" width=\"{2:.2f}\" height=\"22\">"
        "<title>{3}: {4}</title></rect>\n",
        style.css, x, width, style.label, bytes_text(by_kind[kind]));
    x += width;
  }
  out += "</svg>\n";
  // Against capacity: the plan's share is often a sliver, so it gets at least 2 px.
  const double share = fraction(e.total_resource_bytes, e.usable_capacity_bytes);
  const double filled = std::clamp(plot * share, 2.0, plot);
  out += fmt::format(
      "<svg id=\"capacity-chart\" width=\"{0}\" height=\"44\" viewBox=\"0 0 {0} 44\" "
      "role=\"img\" aria-label=\"plan memory against usable capacity\">\n"
      "<text x=\"0\" y=\"22\">capacity</text>\n"
      "<rect x=\"{1}\" y=\"8\" width=\"{2:.2f}\" height=\"22\" fill=\"#e5e7eb\" stroke=\"#9ca3af\">"
      "<title>usable capacity {3}</title></rect>\n"
      "<rect class=\"used\" x=\"{1}\" y=\"8\" width=\"{4:.2f}\" height=\"22\" fill=\"#c0392b\">"
      "<title>plan {5} ({6:.4f}% of capacity)</title></rect>\n"
      "<text x=\"{1}\" y=\"42\">{5} of {3} usable ({6:.4f}%)</text>\n</svg>\n",
      kChartWidth, kMarginLeft, plot, bytes_text(e.usable_capacity_bytes), filled,
      bytes_text(e.total_resource_bytes), 100.0 * share);
  if (fit != nullptr) {
    out += fmt::format(
        "<p class=\"note\" id=\"fit\">Model file: compiled for {} positions (the model declares "
        "{}); {} · the largest context that fits is {} positions.</p>\n",
        fit->context_length, fit->model_context_length,
        fit->fits ? "fits" : "<strong>does not fit</strong>", fit->largest_fitting_context);
  }
  out += "</section>\n";
}

void append_arena(std::string& out, const PlanExplanation& e, const ExplainedArena& arena,
                  size_t arena_index) {
  std::vector<const ExplainedBuffer*> buffers;
  for (const auto& b : e.buffers) {
    if (b.arena_id == arena.id) buffers.push_back(&b);
  }
  const uint64_t nodes = std::max<uint64_t>(e.nodes.size(), 1);
  const uint64_t top = std::max<uint64_t>({arena.peak_bytes, arena.load_bytes, 1});
  const double plot_w = kChartWidth - kMarginLeft - kMarginRight;
  const double plot_h = kArenaHeight - kMarginTop - kMarginBottom;
  const double x0 = kMarginLeft;
  const double y_bottom = kMarginTop + plot_h;
  auto x_of = [&](uint64_t node) { return x0 + plot_w * fraction(node, nodes); };
  auto y_of = [&](uint64_t bytes) { return y_bottom - plot_h * fraction(bytes, top); };

  out += fmt::format(
      "<h3>{} <span class=\"id\">{}</span></h3>\n<p class=\"note\">{} buffers · peak (arena "
      "size) {} · LOAD {} · peak/LOAD {:.3f} · one dedicated resource per buffer would take "
      "{}.</p>\n",
      html_escape(arena.storage_profile), html_escape(arena.id), arena.buffers,
      bytes_text(arena.peak_bytes), bytes_text(arena.load_bytes),
      arena.load_bytes == 0 ? 0.0 : fraction(arena.peak_bytes, arena.load_bytes),
      bytes_text(arena.dedicated_bytes));
  out += fmt::format(
      "<svg class=\"arena-chart\" id=\"arena-chart-{0}\" width=\"{1}\" height=\"{2}\" "
      "viewBox=\"0 0 {1} {2}\" role=\"img\" aria-label=\"activation arena: byte offset against "
      "node index\">\n",
      arena_index, kChartWidth, kArenaHeight);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const ExplainedBuffer& b = *buffers[i];
    const double x = x_of(b.first_node);
    const double w = std::max(x_of(b.last_node + 1) - x, 1.0);
    const double y = y_of(b.offset_bytes + b.length_bytes);
    const double h = std::max(y_of(b.offset_bytes) - y, 1.0);
    out += fmt::format(
        "<rect class=\"buffer\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" "
        "fill=\"{}\"><title>{} · offset {} · {} · nodes {}–{}</title></rect>\n",
        x, y, w, h, buffer_fill(i), html_escape(b.value_id), b.offset_bytes,
        bytes_text(b.length_bytes), b.first_node, b.last_node);
  }
  const double x_end = x0 + plot_w;
  out += fmt::format(
      "<line class=\"peak\" x1=\"{0}\" x2=\"{1:.2f}\" y1=\"{2:.2f}\" y2=\"{2:.2f}\"/>"
      "<text x=\"{3:.2f}\" y=\"{4:.2f}\" text-anchor=\"end\">peak {5}</text>\n",
      x0, x_end, y_of(arena.peak_bytes), x_end, y_of(arena.peak_bytes) - 3,
      bytes_text(arena.peak_bytes));
  out += fmt::format(
      "<line class=\"load\" x1=\"{0}\" x2=\"{1:.2f}\" y1=\"{2:.2f}\" y2=\"{2:.2f}\"/>"
      "<text x=\"{0:.2f}\" y=\"{3:.2f}\">LOAD {4}</text>\n",
      x0, x_end, y_of(arena.load_bytes), y_of(arena.load_bytes) - 3, bytes_text(arena.load_bytes));
  // Axes with their extremes.
  out += fmt::format(
      "<line class=\"axis\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>"
      "<line class=\"axis\" x1=\"{0}\" x2=\"{3:.2f}\" y1=\"{2}\" y2=\"{2}\"/>\n"
      "<text x=\"{4}\" y=\"{2}\" text-anchor=\"end\">0</text>"
      "<text x=\"{4}\" y=\"{5:.2f}\" text-anchor=\"end\">{6}</text>\n"
      "<text x=\"{0}\" y=\"{7}\">node 0</text>"
      "<text x=\"{3:.2f}\" y=\"{7}\" text-anchor=\"end\">node {8}</text>"
      "<text x=\"{9:.2f}\" y=\"{7}\" text-anchor=\"middle\">time (node index) →</text>\n"
      "<text x=\"12\" y=\"{10:.2f}\" transform=\"rotate(-90 12 {10:.2f})\" "
      "text-anchor=\"middle\">byte offset</text>\n</svg>\n",
      x0, kMarginTop, y_bottom, x_end, x0 - 4, y_of(top) + 10, bytes_text(top),
      kArenaHeight - 8, nodes - 1, x0 + plot_w / 2, kMarginTop + plot_h / 2);
}

void append_arenas(std::string& out, const PlanExplanation& e) {
  out += "<section id=\"arenas\"><h2>Activation arenas</h2>\n";
  if (e.arenas.empty()) {
    out += "<p class=\"note\">No packed activation arena (dedicated activation storage).</p>\n";
  }
  for (size_t i = 0; i < e.arenas.size(); ++i) append_arena(out, e, e.arenas[i], i);
  out += "</section>\n";
}

void append_nodes(std::string& out, const PlanExplanation& e) {
  out += fmt::format(
      "<section id=\"nodes\"><h2>Nodes</h2>\n<p class=\"note\">{} nodes; {} fall back from the "
      "preferred provider (highlighted).</p>\n<table id=\"node-table\">\n<tr><th>#</th><th>node"
      "</th><th>operation</th><th>provider</th><th>why</th><th>compatible</th><th>rejected "
      "providers</th></tr>\n",
      e.nodes.size(), e.fallbacks);
  for (size_t i = 0; i < e.nodes.size(); ++i) {
    const ExplainedNode& n = e.nodes[i];
    const bool fallback = n.selection_reason == "fallback_from_preferred";
    std::string rejected;
    for (const auto& [provider, reason] : n.rejected) {
      rejected += fmt::format("<div><code>{}</code>: {}</div>", html_escape(provider),
                              html_escape(reason));
    }
    std::vector<std::string> compatible;
    for (const auto& c : n.compatible) compatible.push_back(html_escape(c));
    out += fmt::format(
        "<tr{}><td>{}</td><td class=\"id\">{}</td><td><code>{}</code></td>"
        "<td class=\"provider\"><code>{}</code></td><td>{}</td><td class=\"rejected\">{}</td>"
        "<td class=\"rejected\">{}</td></tr>\n",
        fallback ? " class=\"fallback\"" : "", i, html_escape(n.id), html_escape(n.operation),
        html_escape(n.provider), html_escape(n.selection_reason), fmt::join(compatible, "<br>"),
        rejected.empty() ? "-" : rejected);
  }
  out += "</table></section>\n";
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string render_html(const PlanExplanation& e, const MemoryFit* fit) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>Ferrite plan report · {}</title>\n", html_escape(e.plan_id));
  out += fmt::format("<style>{}</style>\n</head>\n<body>\n", kStyle);
  out += fmt::format("<h1>Ferrite plan report</h1>\n<p class=\"note\">{} · {} nodes · {}</p>\n",
                     html_escape(e.family_id), e.nodes.size(), html_escape(e.plan_id));
  append_summary(out, e);
  append_memory(out, e, fit);
  append_arenas(out, e);
  append_nodes(out, e);
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace ferrite::cli
