#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scripts/exporter_graph.py QUERY_JSON PROMQL: Prometheus' query_range answer, one line
per series (by its cpu label), drawn as SVG on stdout (scripts/exporter-graph)."""
import json
import sys
from xml.sax.saxutils import escape

W, H = 760, 300
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 45
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e"]


def main():
    with open(sys.argv[1]) as f:
        answer = json.load(f)
    promql = sys.argv[2]
    series = sorted(answer["data"]["result"], key=lambda s: int(s["metric"].get("cpu", "0")))
    if not series:
        sys.exit("exporter_graph: the query returned no series")
    t0 = min(float(s["values"][0][0]) for s in series)
    t1 = max(float(s["values"][-1][0]) for s in series)
    vmax = max(float(v) for s in series for _, v in s["values"]) or 1.0
    scale = 10 ** 9  # per second, in billions
    top = -(-vmax // (scale / 2)) * (scale / 2)  # up to a half billion

    def x(t):
        return LEFT + (t - t0) / max(t1 - t0, 1) * (W - LEFT - RIGHT)

    def y(v):
        return H - BOTTOM - v / top * (H - TOP - BOTTOM)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{LEFT}" y="20" font-family="monospace" font-size="13">'
           f'{escape(promql)}</text>']
    steps = round(top / (scale / 2))
    for i in range(steps + 1):
        v = top * i / steps
        out.append(f'<line x1="{LEFT}" y1="{y(v):.1f}" x2="{W - RIGHT}" y2="{y(v):.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">'
                   f'{v / scale:.1f}e9</text>')
    for t in range(0, int(t1 - t0) + 1, 10):
        out.append(f'<text x="{x(t0 + t):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">'
                   f'{t} s</text>')
    out.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 8}" text-anchor="middle">'
               'a busy loop on CPU 0, then CPU 1, then both (archpmu exporter scraped every '
               'second; the model, 2 vCPUs)</text>')
    for i, s in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        points = " ".join(f"{x(float(t)):.1f},{y(float(v)):.1f}" for t, v in s["values"])
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                   f'points="{points}"/>')
        label = escape(f'cpu="{s["metric"].get("cpu", "?")}"')
        out.append(f'<text x="{W - RIGHT - 70}" y="{TOP + 16 * i + 4}" fill="{colour}">'
                   f'{label}</text>')
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
