#!/usr/bin/env bash
# The HTML plan report in a real browser (ctest: html_report_browser).
#   html_report_browser_test.sh FERRITE_BINARY SOURCE_DIR
# Writes the report of the stories260K plan, has headless Chromium (Debian's
# `chromium`, installed by scripts/setup.sh) load it from disk with the
# network off, and checks
#   * the DOM Chromium built (--dump-dom): the node table has one row per
#     plan node plus the header, the arena chart one rect.buffer per buffer
#     the plan's arena declares, the peak and LOAD lines and the memory charts;
#   * the screenshot (--screenshot): a PNG of the window's size whose pixels
#     include the report's own colours (the weights / states / activations /
#     workspaces swatches and the fallback highlight), i.e. the page was drawn.
# The screenshot is kept as $FERRITE_REPORT_SCREENSHOT when that is set.
set -euo pipefail
ferrite="$1"
source_dir="$(cd "$2" && pwd)"
model="$source_dir/../shared/models/stories260K.gguf"
chromium="$(command -v chromium || command -v chromium-browser || true)"
[[ -n "$chromium" ]] || { echo "html_report_browser: chromium is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$ferrite" compile "$model" -o "$work/plan.json" >/dev/null
"$ferrite" explain "$work/plan.json" --html "$work/report.html" >/dev/null
"$ferrite" explain "$work/plan.json" --json >"$work/explain.json"

browser=("$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions
         --disable-background-networking --proxy-server=127.0.0.1:9 --user-data-dir="$work/profile"
         --hide-scrollbars --window-size=1100,1400)
timeout 120 "${browser[@]}" --dump-dom "file://$work/report.html" >"$work/dom.html" 2>"$work/chromium.log" ||
  { cat "$work/chromium.log" >&2; exit 1; }
timeout 120 "${browser[@]}" --screenshot="$work/shot.png" "file://$work/report.html" \
  >>"$work/chromium.log" 2>&1 || { cat "$work/chromium.log" >&2; exit 1; }
[[ -s "$work/shot.png" ]] || { echo "html_report_browser: no screenshot" >&2; cat "$work/chromium.log" >&2; exit 1; }
if [[ -n "${FERRITE_REPORT_SCREENSHOT:-}" ]]; then cp "$work/shot.png" "$FERRITE_REPORT_SCREENSHOT"; fi

python3 - "$work/dom.html" "$work/explain.json" "$work/shot.png" <<'PY'
import html.parser, json, struct, sys, zlib

dom_path, explain_path, png_path = sys.argv[1:4]
explain = json.load(open(explain_path))

class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.rows, self.buffers, self.ids, self.lines = [], 0, 0, set(), set()
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a: self.ids.add(a["id"])
        if tag == "tr" and "node-table" in self.stack: self.rows += 1
        if tag == "rect" and "buffer" in a.get("class", "").split(): self.buffers += 1
        if tag == "line": self.lines.add(a.get("class", ""))
        if tag == "table" and a.get("id") == "node-table": self.stack.append("node-table")
    def handle_endtag(self, tag):
        if tag == "table" and self.stack: self.stack.pop()

dom = Dom()
dom.feed(open(dom_path, encoding="utf-8").read())
failures = []
nodes = len(explain["nodes"])
buffers = sum(a["buffers"] for a in explain["activation_arenas"])
if dom.rows != nodes + 1: failures.append(f"node table rows {dom.rows}, expected {nodes + 1}")
if dom.buffers != buffers: failures.append(f"arena chart rects {dom.buffers}, expected {buffers}")
for needed in ("summary", "memory-chart", "capacity-chart", "arena-chart-0", "node-table"):
    if needed not in dom.ids: failures.append(f"no element #{needed} in the DOM")
for line in ("peak", "load"):
    if line not in dom.lines: failures.append(f"no line.{line} in the arena chart")

# The screenshot: decode the PNG (8-bit RGB/RGBA, non-interlaced) with zlib alone.
data = open(png_path, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n": sys.exit("screenshot is not a PNG")
pos, idat, width = 8, b"", 0
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
        if depth != 8 or color not in (2, 6) or interlace: sys.exit(f"unexpected PNG format {depth}/{color}/{interlace}")
        channels = 3 if color == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
raw = zlib.decompress(idat)
stride = width * channels
colors, prev = set(), bytearray(stride)
for y in range(height):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - channels] if i >= channels else 0
        b = prev[i]
        c = prev[i - channels] if i >= channels else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, channels * 2):
        colors.add(bytes(line[x:x + 3]))
    prev = line
if (width, height) != (1100, 1400): failures.append(f"screenshot is {width}x{height}")
for name, rgb in {"weights": "4c78a8", "states": "f58518", "activations": "54a24b",
                  "workspaces": "b279a2", "fallback row": "fff1cc"}.items():
    if bytes.fromhex(rgb) not in colors: failures.append(f"the screenshot has no {name} colour #{rgb}")
if len(colors) < 50: failures.append(f"the screenshot has only {len(colors)} colours")
if failures:
    print("html_report_browser:\n  " + "\n  ".join(failures), file=sys.stderr)
    sys.exit(1)
print(f"html_report_browser: {nodes} node rows, {buffers} buffers drawn, {len(colors)} colours in a {width}x{height} screenshot")
PY
