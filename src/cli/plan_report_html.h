// cli/plan_report_html.h — `ferrite explain … --html FILE`: the plan as one
// page to look at.
//
// Contract: `render_html(explanation, fit)` returns one self-contained HTML5
// document (inline CSS and SVG; no script, no external reference of any
// kind, so it opens offline and from an attachment). It shows, in order:
//   * `#summary`: plan id, family, device, policy, scheduled tokens, nodes per
//     provider, fallbacks, memory against usable capacity;
//   * `#memory`: memory by kind (weights, KV cache and states, activations,
//     workspaces) as one stacked bar of the plan's total, and the total
//     against the usable capacity (`#capacity-chart`); with `fit` (a model
//     file), the context it was compiled for and the largest that fits;
//   * `#arenas`: each packed activation arena as an offset × time chart
//     (`svg.arena-chart`): one `rect.buffer` per buffer (x: the node indices
//     from its first to its last use, y: its byte range; its value id,
//     offset, length and live range in a <title> tooltip), a `line.peak` at
//     the arena's size and a `line.load` at its LOAD (the largest sum of
//     buffers live at one node, the bound no placement can beat);
//   * `#nodes`: one row per node (`table#node-table`): operation, provider,
//     why it was chosen, compatible providers and every rejected provider
//     with its reason; rows whose provider is a fallback from the preferred
//     one have class `fallback` and are highlighted.
// Every text from the plan is HTML-escaped: a plan is data, never markup. The
// output depends only on the explanation (byte-identical for equal input).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto explanation, explain_plan(wire));
//   FERRITE_RETURN_IF_ERROR(write_file_atomically("report.html", render_html(explanation, nullptr)));
#pragma once

#include <string>
#include <string_view>

#include "cli/model_plan.h"
#include "cli/plan_explanation.h"

namespace ferrite::cli {

std::string render_html(const PlanExplanation& explanation, const MemoryFit* fit);

// `text` with & < > " ' replaced by their character references.
std::string html_escape(std::string_view text);

}  // namespace ferrite::cli
