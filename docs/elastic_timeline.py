#!/usr/bin/env python3
"""Draws the elastic agents' Chrome trace (ringlab run --trace) as an SVG
timeline: a lane per agent, its rendezvous, rounds and stops as boxes, its
restarts, failures and lost nodes as marks under the lane. Python's standard
library only.

    docs/elastic_timeline.py TRACE.json OUT.svg
"""
import json
import sys
from html import escape

LANE_HEIGHT = 34
MARK_ROWS = 4  # rows of labels under a lane, for marks close in time
ROW_HEIGHT = 14
LEFT = 190  # room for the lane names
WIDTH = 1100
RIGHT = 80  # room for the last mark's label
SECONDS_PER_TICK = 1

COLORS = {"rendezvous": "#bbbbbb", "stopping": "#e8a33d"}
ROUND_COLORS = ["#6a9fd8", "#5bb381", "#9b7fd1", "#d86a8f"]
MARK_COLORS = {"restart": "#c0392b", "worker failure": "#e67e22",
               "node lost": "#8e44ad", "job failed": "#000000", "job finished": "#27ae60"}


def main(trace_path, svg_path):
    with open(trace_path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    lanes = {e["pid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    timed = [e for e in events if e.get("ph") in ("X", "i")]
    if not timed:
        sys.exit("elastic_timeline: no rounds in " + trace_path)
    start = min(e["ts"] for e in timed)
    end = max(e["ts"] + e.get("dur", 0) for e in timed)
    scale = (WIDTH - LEFT - RIGHT) / max(end - start, 1)

    def x(ts):
        return LEFT + (ts - start) * scale

    lane_block = LANE_HEIGHT + MARK_ROWS * ROW_HEIGHT + 16
    height = 40 + lane_block * len(lanes) + 30
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (WIDTH, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="20" font-size="13" font-weight="bold">ringlab run: '
           'the elastic agents\' rounds (%s)</text>' % escape(trace_path.split("/")[-1])]
    for index, (pid, name) in enumerate(sorted(lanes.items())):
        top = 40 + index * lane_block
        out.append('<text x="10" y="%d">%s</text>' % (top + LANE_HEIGHT / 2 + 4, escape(name)))
        rounds = 0
        marks = []
        for e in sorted((e for e in timed if e["pid"] == pid), key=lambda e: e["ts"]):
            args = "; ".join("%s: %s" % kv for kv in e.get("args", {}).items())
            if e["ph"] == "X":
                name = e["name"]
                if name.startswith("round"):
                    color = ROUND_COLORS[rounds % len(ROUND_COLORS)]
                    rounds += 1
                else:
                    color = COLORS.get(name, "#dddddd")
                left, right = x(e["ts"]), x(e["ts"] + e["dur"])
                out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" '
                           'stroke="white"><title>%s</title></rect>'
                           % (left, top, max(right - left, 1), LANE_HEIGHT, color,
                              escape(name + ": " + args)))
                # "round 1: world size 8" -> "round 1: world 8"
                label = (name.replace("world size", "world") if name.startswith("round")
                         else "rdzv" if name == "rendezvous" else "")
                if label and right - left > 6 * len(label):
                    out.append('<text x="%.1f" y="%d" fill="%s">%s</text>'
                               % (left + 4, top + LANE_HEIGHT / 2 + 4,
                                  "white" if name.startswith("round") else "black",
                                  escape(label)))
            else:
                marks.append(e)
        row_free = [0.0] * MARK_ROWS  # where each row of labels is free again
        for e in marks:
            at = x(e["ts"])
            kind = "restart" if e["name"].startswith("restart") else e["name"]
            color = MARK_COLORS.get(kind, "#555555")
            row = next((r for r in range(MARK_ROWS) if row_free[r] <= at), MARK_ROWS - 1)
            row_free[row] = at + 7 * len(e["name"]) + 8
            y = top + LANE_HEIGHT + 12 + row * ROW_HEIGHT
            args = "; ".join("%s: %s" % kv for kv in e.get("args", {}).items())
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"/>'
                       % (at, top - 2, at, y - 3, color))
            out.append('<text x="%.1f" y="%d" fill="%s">%s<title>%s</title></text>'
                       % (at + 2, y + 6, color, escape(e["name"]), escape(args)))
    axis = 40 + lane_block * len(lanes) + 5
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>' % (LEFT, axis, WIDTH - RIGHT, axis))
    for second in range(0, int((end - start) / 1e6) + 1, SECONDS_PER_TICK):
        tick = x(start + second * 1e6)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#888"/>'
                   % (tick, axis, tick, axis + 4))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%d s</text>'
                   % (tick, axis + 16, second))
    out.append("</svg>")
    with open(svg_path, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
