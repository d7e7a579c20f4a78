"""Drawing a report's figures as SVG with matplotlib (no display, no pyplot state).

Each figure is drawn on its own ``matplotlib.figure.Figure`` with its own canvas, so nothing global
is touched and requests can draw side by side. Figures are sized for the width the report page shows
them at (about 30 rem), with fonts of 10–12 pt at that size, and saved as vector graphics so they
stay crisp when zoomed or printed.
"""

from __future__ import annotations

import base64
import io
import math
import textwrap
from typing import Any

from validation.reports.base import Figure

__all__ = ["svg", "svg_data_uri"]

#: Width in inches; the page shows a figure about this wide, so point sizes are what a person reads.
WIDTH_IN = 5.0
TICK_PT, LABEL_PT, TITLE_PT, CELL_PT = 10, 11, 12, 11
#: Tick labels longer than this wrap onto several lines instead of running off the figure.
WRAP_CHARS = 14


def svg(figure: Figure) -> str:
    """The figure as an SVG document."""
    # Imported here: matplotlib costs a noticeable start-up, and only pages with plots need it.
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure as MplFigure

    drawing = MplFigure(figsize=(WIDTH_IN, _height(figure)), layout="constrained")
    FigureCanvasSVG(drawing)
    axes = drawing.add_subplot()
    draw = {
        "heatmap": _heatmap,
        "bars": _bars,
        "histogram": _histogram,
        "correlation": _correlation,
        "forest": _forest,
        "lines": _lines,
    }
    draw[figure.kind](axes, figure.data)
    axes.set_title(_wrap(figure.title, 48), fontsize=TITLE_PT)
    axes.tick_params(labelsize=TICK_PT)
    buffer = io.StringIO()
    drawing.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return buffer.getvalue()


def svg_data_uri(figure: Figure) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg(figure).encode("utf-8")).decode("ascii")


def _wrap(text: str, width: int = WRAP_CHARS) -> str:
    return "\n".join(textwrap.wrap(str(text), width=width, break_long_words=False)) or str(text)


def _height(figure: Figure) -> float:
    if figure.kind in ("heatmap", "correlation"):
        return min(5.5, 2.6 + 0.5 * len(figure.data["labels"]))
    if figure.kind == "forest":
        return min(12.0, 1.6 + 0.45 * len(figure.data["rows"]))
    return 3.8


def _heatmap(axes: Any, data: dict[str, Any]) -> None:
    counts = data["counts"]
    labels = [_wrap(label) for label in data["labels"]]
    image = axes.imshow(counts, cmap="Blues", aspect="auto")
    bar = axes.figure.colorbar(image, ax=axes, shrink=0.8)
    bar.set_label("pairs", fontsize=LABEL_PT)
    bar.ax.tick_params(labelsize=TICK_PT)
    rotate = any(len(label) > 6 for label in data["labels"]) and len(labels) > 3
    axes.set_xticks(range(len(labels)), labels=labels, rotation=30 if rotate else 0, ha="right" if rotate else "center")
    axes.set_yticks(range(len(labels)), labels=labels)
    axes.set_xlabel(_wrap(data["columns"], 40), fontsize=LABEL_PT)
    axes.set_ylabel(_wrap(data["rows"], 28), fontsize=LABEL_PT)
    peak = max((max(row) for row in counts), default=0) or 1
    for i, row in enumerate(counts):
        for j, count in enumerate(row):
            color = "white" if count > peak / 2 else "black"
            axes.text(j, i, str(count), ha="center", va="center", fontsize=CELL_PT, color=color)


def _correlation(axes: Any, data: dict[str, Any]) -> None:
    """A correlation matrix on a fixed −1..1 scale, each cell written out (blank where undefined)."""
    labels = data["labels"]
    values = [[math.nan if v is None else v for v in row] for row in data["values"]]
    image = axes.imshow(values, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    bar = axes.figure.colorbar(image, ax=axes, shrink=0.8)
    bar.set_label("Spearman's rho", fontsize=LABEL_PT)
    bar.ax.tick_params(labelsize=TICK_PT)
    axes.set_xticks(range(len(labels)), labels=labels)
    axes.set_yticks(range(len(labels)), labels=labels)
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            if not math.isnan(value):
                color = "white" if abs(value) > 0.6 else "black"
                axes.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=CELL_PT - 2, color=color)


def _bars(axes: Any, data: dict[str, Any]) -> None:
    groups, series = data["groups"], data["series"]
    width = 0.8 / max(len(series), 1)
    for s, item in enumerate(series):
        xs = [g + (s - (len(series) - 1) / 2) * width for g in range(len(groups))]
        values = [math.nan if v is None else v for v in item["values"]]
        lower = [0 if v is None or lo is None else v - lo for v, lo in zip(item["values"], item["low"], strict=True)]
        upper = [0 if v is None or hi is None else hi - v for v, hi in zip(item["values"], item["high"], strict=True)]
        axes.bar(xs, values, width=width, label=item["name"], yerr=[lower, upper], capsize=3)
    rotate = len(groups) > 4  # a few groups fit side by side once their labels wrap
    axes.set_xticks(
        range(len(groups)),
        labels=[_wrap(g) for g in groups],
        rotation=30 if rotate else 0,
        ha="right" if rotate else "center",
    )
    axes.axhline(0, color="black", linewidth=0.6)
    axes.set_ylim(min(0, *[v for s in series for v in s["low"] if v is not None], 0) - 0.05, 1.05)
    if data.get("ylabel"):
        axes.set_ylabel(data["ylabel"], fontsize=LABEL_PT)
    if len(series) > 1:
        axes.legend(fontsize=TICK_PT)


def _histogram(axes: Any, data: dict[str, Any]) -> None:
    series = data["series"]
    top = max((max(s["values"]) for s in series if s["values"]), default=1)
    bins = min(30, max(5, top + 1))
    for item in series:
        axes.hist(item["values"], bins=bins, range=(0, max(top, 1)), alpha=0.6, label=item["name"])
    axes.set_xlabel(data["xlabel"], fontsize=LABEL_PT)
    axes.set_ylabel("pairs", fontsize=LABEL_PT)
    axes.legend(fontsize=TICK_PT)


#: The three estimates of a forest plot, top to bottom within a row: (key, legend, marker).
FOREST_SERIES = (("model", "Model only", "s"), ("people", "People only", "o"), ("ppi", "Prediction-powered", "D"))


def _forest(axes: Any, data: dict[str, Any]) -> None:
    """One row per dimension (and group), the three estimates side by side with their intervals."""
    rows = data["rows"]
    for offset, (key, name, marker) in zip((-0.22, 0.0, 0.22), FOREST_SERIES, strict=True):
        ys, xs, lower, upper = [], [], [], []
        for position, row in enumerate(rows):
            point = row.get(key)
            if point is None or point[0] is None:
                continue
            estimate, low, high = point
            ys.append(position + offset)
            xs.append(estimate)
            lower.append(0 if low is None else estimate - low)
            upper.append(0 if high is None else high - estimate)
        axes.errorbar(xs, ys, xerr=[lower, upper], fmt=marker, capsize=3, label=name, markersize=5)
    axes.set_yticks(range(len(rows)), labels=[row["label"] for row in rows])
    axes.invert_yaxis()
    axes.set_xlabel(data.get("xlabel", "estimate"), fontsize=LABEL_PT)
    axes.legend(fontsize=TICK_PT, loc="best")


def _lines(axes: Any, data: dict[str, Any]) -> None:
    """Curves of y against x (the planner's half-width against labels), with a vertical mark."""
    for series in data["series"]:
        points = [(x, y) for x, y in zip(series["x"], series["y"], strict=True) if x is not None and y is not None]
        axes.plot([x for x, _ in points], [y for _, y in points], marker="o", markersize=3, label=series["name"])
    if data.get("mark"):
        axes.axvline(data["mark"], color="grey", linestyle="--", linewidth=1, label=data.get("mark_label", ""))
    axes.set_xscale(data.get("xscale", "log"))
    axes.set_xlabel(data["xlabel"], fontsize=LABEL_PT)
    axes.set_ylabel(data["ylabel"], fontsize=LABEL_PT)
    axes.legend(fontsize=TICK_PT)
