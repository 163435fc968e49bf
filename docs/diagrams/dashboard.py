#!/usr/bin/env python3
"""The Grafana dashboard (deploy/grafana/neardup.json) drawn without Grafana: its panels' own
PromQL, evaluated by a Prometheus that scraped a real neardupd, rendered with matplotlib in the
dashboard's layout, titles, units and legends.

    dashboard.py collect --prometheus http://127.0.0.1:9090 --start UNIX --end UNIX DATA.json
    dashboard.py render DATA.json OUT.png|OUT.svg

`collect` asks Prometheus's HTTP API (query_range) every target of every panel, with the
dashboard's `$instance` variable as `.*` (all instances), and writes the answers and the
dashboard to DATA.json (no dependency beyond Python). `render` draws DATA.json (needs
matplotlib: `python3 -m venv v && v/bin/pip install matplotlib`, or Debian's python3-matplotlib).
docs/diagrams/dashboard-run.sh does both around a run of its own (docs/operations.md,
"Dashboard").
"""
import argparse
import datetime
import json
import math
import os
import sys
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DASHBOARD = os.path.join(HERE, "..", "..", "deploy", "grafana", "neardup.json")
GRID_COLUMNS = 24  # Grafana's grid: 24 columns, rows of 30 px


def expression(expr):
    """A panel's expression with the dashboard variables Prometheus cannot know filled in."""
    return expr.replace("$instance", ".*")


def collect(args):
    with open(args.dashboard) as f:
        dashboard = json.load(f)
    answers = {}
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            query = urllib.parse.urlencode({
                "query": expression(target["expr"]), "start": args.start, "end": args.end,
                "step": args.step})
            url = f"{args.prometheus}/api/v1/query_range?{query}"
            with urllib.request.urlopen(url, timeout=30) as response:
                answer = json.load(response)
            if answer.get("status") != "success":
                sys.exit(f"dashboard.py: {target['expr']}: {answer}")
            answers[target["expr"]] = answer["data"]["result"]
    with open(args.data, "w") as f:
        json.dump({"dashboard": dashboard, "start": args.start, "end": args.end,
                   "answers": answers}, f)
    print(f"dashboard.py: {len(answers)} queries from {args.prometheus} into {args.data}")


def legend(fmt, labels):
    """Grafana's legendFormat: {{label}} replaced by the series' label value."""
    if not fmt:
        return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
    out = fmt
    for key, value in labels.items():
        out = out.replace("{{" + key + "}}", value)
    return out


def scale(unit, values):
    """(divisor, suffix) for the unit, Grafana-like: bytes in binary multiples, seconds in ms or
    µs when small, percentunit as %."""
    finite = [abs(v) for v in values if math.isfinite(v)]
    top = max(finite, default=0)
    if unit == "bytes":
        for power, name in ((3, "GiB"), (2, "MiB"), (1, "KiB")):
            if top >= 1024 ** power:
                return 1024 ** power, " " + name
        return 1, " B"
    if unit == "s":
        if top < 1e-3:
            return 1e-6, " µs"
        if top < 1:
            return 1e-3, " ms"
        return 1, " s"
    if unit == "percentunit":
        return 0.01, "%"
    if unit == "reqps":
        return 1, " /s"
    return 1, ""


def number(value, unit):
    divisor, suffix = scale(unit, [value])
    shown = value / divisor
    text = f"{shown:.0f}" if abs(shown) >= 100 or shown == int(shown) else f"{shown:.3g}"
    return text + suffix


def series_of(data, target):
    for result in data["answers"].get(target["expr"], []):
        points = [(float(t), float(v)) for t, v in result["values"]]
        yield legend(target.get("legendFormat"), result["metric"]), points


def draw_stat(ax, panel, data):
    unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short")
    mappings = {}
    for mapping in panel.get("fieldConfig", {}).get("defaults", {}).get("mappings", []):
        if mapping.get("type") == "value":
            mappings.update(mapping["options"])
    last, points = None, []
    for target in panel.get("targets", []):
        for _, target_points in series_of(data, target):
            points = [p for p in target_points if math.isfinite(p[1])]
            if points:
                last = points[-1][1]  # reduceOptions lastNotNull
    color = "#2c7fb8"
    if last is None:
        text = "No data"
    elif str(int(last)) in mappings and last == int(last):
        text = mappings[str(int(last))].get("text", "")
        color = {"green": "#1a9850", "red": "#d73027"}.get(
            mappings[str(int(last))].get("color"), color)
    else:
        text = number(last, unit)
    if points and panel.get("options", {}).get("graphMode") == "area":
        xs = [t for t, _ in points]
        ys = [v for _, v in points]
        ax.fill_between(xs, ys, color=color, alpha=0.15, linewidth=0)
        ax.set_ylim(min(0, min(ys)), max(ys) * 1.6 if max(ys) > 0 else 1)
        ax.set_xlim(xs[0], xs[-1])
    ax.text(0.5, 0.45, text, transform=ax.transAxes, ha="center", va="center", fontsize=20,
            color=color, fontweight="bold")
    ax.set_xticks([])
    ax.set_yticks([])


def draw_timeseries(ax, panel, data, start):
    unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short")
    lines = []
    for target in panel.get("targets", []):
        lines.extend(series_of(data, target))
    values = [v for _, points in lines for _, v in points]
    divisor, suffix = scale(unit, values)
    for name, points in lines:
        xs = [(t - start) / 60 for t, _ in points]
        ys = [v / divisor if math.isfinite(v) else float("nan") for _, v in points]
        ax.plot(xs, ys, linewidth=1.2, label=name)
    if not lines:
        ax.text(0.5, 0.5, "No data", transform=ax.transAxes, ha="center", va="center",
                color="#888888")
    if suffix.strip():
        ax.set_ylabel(suffix.strip(), fontsize=7)
    ax.tick_params(labelsize=7)
    ax.grid(True, color="#e5e5e5", linewidth=0.6)
    ax.set_ylim(bottom=0)
    if lines:  # below the panel, as Grafana's legend "list" at the bottom
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0, -0.09), ncol=6,
                  frameon=False, handlelength=1.2, columnspacing=1.2)


def render(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(args.data) as f:
        data = json.load(f)
    dashboard = data["dashboard"]
    panels = dashboard["panels"]
    rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels)
    # In inches: Grafana's 24 columns across the page, its grid rows, a header for the title.
    width, row, header = 16.0, 0.45, 0.7
    column = width / GRID_COLUMNS
    height = header + rows * row
    figure = plt.figure(figsize=(width, height))
    started = datetime.datetime.fromtimestamp(data["start"], datetime.timezone.utc)
    minutes = (data["end"] - data["start"]) / 60
    figure.suptitle(f"{dashboard.get('title', '')}: {minutes:.0f} minutes of a neardupd run from "
                    f"{started:%Y-%m-%d %H:%M} UTC; x axes in minutes into the run\n"
                    f"(deploy/grafana/neardup.json: its panels, queries evaluated by Prometheus, "
                    f"drawn by docs/diagrams/dashboard.py)", fontsize=10, y=1 - 0.08 / height)
    for panel in panels:
        g = panel["gridPos"]
        series = panel["type"] == "timeseries"
        # Room inside the panel's cell: tick labels left, the title on top, the legend below.
        pad_left, pad_right = (0.6, 0.15) if series else (0.12, 0.12)
        pad_top, pad_bottom = 0.32, (0.62 if series else 0.1)
        left = g["x"] * column + pad_left
        ax = figure.add_axes([left / width,
                              1 - (header + (g["y"] + g["h"]) * row - pad_bottom) / height,
                              (g["w"] * column - pad_left - pad_right) / width,
                              (g["h"] * row - pad_top - pad_bottom) / height])
        ax.set_title(panel.get("title", ""), fontsize=9, loc="left", fontweight="bold")
        if series:
            draw_timeseries(ax, panel, data, data["start"])
        else:
            draw_stat(ax, panel, data)
    figure.savefig(args.out, dpi=args.dpi)
    print(f"dashboard.py: {len(panels)} panels into {args.out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    c = commands.add_parser("collect", help="ask Prometheus every panel's queries")
    c.add_argument("--prometheus", default="http://127.0.0.1:9090")
    c.add_argument("--start", type=float, required=True, help="unix seconds")
    c.add_argument("--end", type=float, required=True, help="unix seconds")
    c.add_argument("--step", type=float, default=5, help="seconds between points")
    c.add_argument("--dashboard", default=DASHBOARD)
    c.add_argument("data")
    r = commands.add_parser("render", help="draw the collected answers")
    r.add_argument("data")
    r.add_argument("out")
    r.add_argument("--dpi", type=int, default=110)
    args = parser.parse_args()
    collect(args) if args.command == "collect" else render(args)


if __name__ == "__main__":
    main()
