"""Drawing a report's figures as PNG with matplotlib's Agg renderer (no display, no pyplot state).

Each figure is drawn on its own ``matplotlib.figure.Figure`` attached to a ``FigureCanvasAgg``, so
nothing global is touched and requests can draw side by side.
"""

from __future__ import annotations

import base64
import io
import math
from typing import Any

from validation.reports.base import Figure

__all__ = ["png", "png_data_uri"]

WIDTH_IN = 5.2
DPI = 110


def png(figure: Figure) -> bytes:
    """The figure as PNG bytes."""
    # Imported here: matplotlib costs a noticeable start-up, and only pages with plots need it.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    drawing = MplFigure(figsize=(WIDTH_IN, _height(figure)), dpi=DPI, layout="constrained")
    FigureCanvasAgg(drawing)
    axes = drawing.add_subplot()
    {"heatmap": _heatmap, "bars": _bars, "histogram": _histogram}[figure.kind](axes, figure.data)
    axes.set_title(figure.title, fontsize=10)
    buffer = io.BytesIO()
    drawing.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def png_data_uri(figure: Figure) -> str:
    return "data:image/png;base64," + base64.b64encode(png(figure)).decode("ascii")


def _height(figure: Figure) -> float:
    if figure.kind == "heatmap":
        return min(5.0, 2.0 + 0.45 * len(figure.data["labels"]))
    return 3.2


def _heatmap(axes: Any, data: dict[str, Any]) -> None:
    counts = data["counts"]
    labels = data["labels"]
    image = axes.imshow(counts, cmap="Blues", aspect="auto")
    axes.figure.colorbar(image, ax=axes, shrink=0.8, label="pairs")
    axes.set_xticks(range(len(labels)), labels=labels, rotation=30, ha="right", fontsize=8)
    axes.set_yticks(range(len(labels)), labels=labels, fontsize=8)
    axes.set_xlabel(data["columns"], fontsize=8)
    axes.set_ylabel(data["rows"], fontsize=8)
    peak = max((max(row) for row in counts), default=0) or 1
    for i, row in enumerate(counts):
        for j, count in enumerate(row):
            axes.text(
                j, i, str(count), ha="center", va="center", fontsize=8, color="white" if count > peak / 2 else "black"
            )


def _bars(axes: Any, data: dict[str, Any]) -> None:
    groups, series = data["groups"], data["series"]
    width = 0.8 / max(len(series), 1)
    for s, item in enumerate(series):
        xs = [g + (s - (len(series) - 1) / 2) * width for g in range(len(groups))]
        values = [math.nan if v is None else v for v in item["values"]]
        lower = [0 if v is None or lo is None else v - lo for v, lo in zip(item["values"], item["low"], strict=True)]
        upper = [0 if v is None or hi is None else hi - v for v, hi in zip(item["values"], item["high"], strict=True)]
        axes.bar(xs, values, width=width, label=item["name"], yerr=[lower, upper], capsize=3)
    axes.set_xticks(range(len(groups)), labels=groups, rotation=20, ha="right", fontsize=8)
    axes.axhline(0, color="black", linewidth=0.6)
    axes.set_ylim(min(0, *[v for s in series for v in s["low"] if v is not None], 0) - 0.05, 1.05)
    if len(series) > 1:
        axes.legend(fontsize=8)


def _histogram(axes: Any, data: dict[str, Any]) -> None:
    series = data["series"]
    top = max((max(s["values"]) for s in series if s["values"]), default=1)
    bins = min(30, max(5, top + 1))
    for item in series:
        axes.hist(item["values"], bins=bins, range=(0, max(top, 1)), alpha=0.6, label=item["name"])
    axes.set_xlabel(data["xlabel"], fontsize=8)
    axes.set_ylabel("pairs", fontsize=8)
    axes.legend(fontsize=7)
