"""Charts as inline SVG, built on the server: no JavaScript, no library, nothing fetched.

Every chart scales to its container through its ``viewBox``, names itself for
screen readers (``role="img"`` and a ``<title>``), and uses presentation
attributes only, so the page's Content-Security-Policy needs no inline styles.
Text is ``currentColor``: the chart follows the page's light or dark scheme.
The numbers themselves sit beside each chart in a table; a chart is a picture
of them, not their only home.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from markupsafe import Markup

from zero_memory.insights import AUTO_VERDICTS, CAPTURE_OUTCOMES, DISMISSAL_KINDS, QUEUE_VERDICTS, Column, Insights

PALETTE = {
    "duplicate": "#5b8db8",
    "supersedes": "#d08c45",
    "contradiction": "#c85a64",
    "unjudged": "#9aa0a6",
    "challenged": "#8a6fbf",
    "stale_suspect": "#4f9d82",
    "outdated": "#b8a45a",
    "other": "#a7a29a",
    "stale": "#6f9fc0",
    "rejudge": "#b783a8",
    "declared": "#4f9d82",
    "plain": "#c4c8ce",
    "created": "#4f9d82",
    "yielded": "#5b8db8",
    "absorbed": "#b9bec5",
    "refused": "#c85a64",
}
FALLBACK = ("#7d9bb5", "#c49a6c", "#8fb39a", "#b58fa8", "#a8a67a")
WIDTH = 560
FONT = 12


def color(category: str) -> str:
    if category in PALETTE:
        return PALETTE[category]
    return FALLBACK[sum(map(ord, category)) % len(FALLBACK)]


def nice_ceiling(value: float) -> int:
    """The smallest 1, 2 or 5 × 10^k at or above ``value`` (at least 1): a round top for an axis."""
    if value <= 1:
        return 1
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if step * power >= value:
            return int(step * power)
    return int(10 * power)


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _svg(title: str, height: float, body: list[str]) -> Markup:
    return Markup(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {_num(height)}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg" font-size="{FONT}" fill="currentColor" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>{"".join(body)}</svg>'
    )


def _text(x: float, y: float, text: str, *, anchor: str = "start", muted: bool = False) -> str:
    opacity = ' fill-opacity="0.7"' if muted else ""
    return f'<text x="{_num(x)}" y="{_num(y)}" text-anchor="{anchor}"{opacity}>{escape(text)}</text>'


def _rect(x: float, y: float, w: float, h: float, fill: str, label: str) -> str:
    return (
        f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(max(w, 0))}" height="{_num(max(h, 0))}" '
        f'fill="{fill}"><title>{escape(label)}</title></rect>'
    )


def legend(categories: Sequence[str]) -> Markup:
    """The colour key of a chart, as an HTML list beside it: it wraps like text on any screen."""
    items = "".join(
        f'<li><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" rx="2" '
        f'fill="{color(name)}"/></svg>{escape(name.replace("_", " "))}</li>'
        for name in categories
    )
    return Markup(f'<ul class="legend">{items}</ul>') if items else Markup("")


def present(columns: Sequence[Column], categories: Sequence[str]) -> list[str]:
    """The categories that occur in ``columns``: the given ones in order, then any others by name."""
    shown = [c for c in categories if any(col.values.get(c) for col in columns)]
    others = sorted({k for col in columns for k, v in col.values.items() if v and k not in categories})
    return shown + others


def stacked_columns(
    columns: Sequence[Column], categories: Sequence[str], *, title: str, height: int = 150, label_every: int = 1
) -> Markup:
    """One column per entry, its categories stacked bottom-up in ``categories`` order.

    The axis shows whole numbers only (counts have no halves); the x axis labels
    every ``label_every``-th column, and the last one when there is room for it.
    """
    left, top, bottom = 40, 10, 26
    plot_h = height - top - bottom
    order = present(columns, categories)
    peak = nice_ceiling(max((col.total for col in columns), default=0))
    ticks = (0, peak // 2, peak) if peak % 2 == 0 and peak >= 2 else (0, peak)
    body: list[str] = []
    for tick in ticks:
        y = top + plot_h * (1 - tick / peak)
        body.append(
            f'<line x1="{left}" x2="{WIDTH}" y1="{_num(y)}" y2="{_num(y)}" stroke="currentColor" '
            f'stroke-opacity="{0.35 if tick == 0 else 0.12}"/>'
        )
        body.append(_text(left - 8, y + 4, str(tick), anchor="end", muted=True))
    every = max(label_every, 1)
    if columns:
        slot = (WIDTH - left) / len(columns)
        bar = max(min(slot * 0.7, 44), 1)
        last = len(columns) - 1
        for i, col in enumerate(columns):
            x = left + i * slot + (slot - bar) / 2
            base = float(top + plot_h)
            for name in order:
                value = col.values.get(name, 0)
                if not value:
                    continue
                h = plot_h * value / peak
                base -= h
                body.append(_rect(x, base, bar, h, color(name), f"{col.label}: {value} {name.replace('_', ' ')}"))
            if i % every == 0 or (i == last and last % every >= every / 2):
                body.append(_text(x + bar / 2, height - 6, col.label, anchor="middle", muted=True))
    if not any(col.total for col in columns):
        body.append(_text(left + (WIDTH - left) / 2, top + plot_h / 2, "nothing yet", anchor="middle", muted=True))
    return _svg(title, height, body)


def horizontal_bars(rows: Sequence[tuple[str, int]], *, title: str, category: str = "") -> Markup:
    """One bar per row, its label above it and its value at its end, longest first as given."""
    row_h = 40
    value_w = 80
    peak = max((value for _, value in rows), default=0) or 1
    body: list[str] = []
    for i, (label, value) in enumerate(rows):
        y = i * row_h
        span = (WIDTH - value_w) * value / peak
        body.append(_text(0, y + 14, label))
        body.append(_rect(0, y + 21, span, 13, color(category or label), f"{label}: {value:,}"))
        body.append(_text(span + 6, y + 32, f"{value:,}", muted=True))
    if not rows:
        body.append(_text(WIDTH / 2, 22, "nothing yet", anchor="middle", muted=True))
    return _svg(title, max(len(rows), 1) * row_h, body)


def share_bar(part: int, whole: int, *, title: str, part_name: str = "declared", rest_name: str = "plain") -> Markup:
    """A single 100% bar: ``part`` of ``whole``, with the percentage written beside it."""
    height = 30
    body: list[str] = []
    if whole:
        split = WIDTH * part / whole
        body.append(_rect(0, 4, split, 22, color(part_name), f"{part} of {whole} {part_name.replace('_', ' ')}"))
        body.append(_rect(split, 4, WIDTH - split, 22, color(rest_name), f"{whole - part} of {whole} {rest_name}"))
        body.append(_text(split + 8, 20, f"{part / whole:.0%}"))
    else:
        body.append(_rect(0, 4, WIDTH, 22, color(rest_name), "no writes yet"))
        body.append(_text(8, 20, "no writes yet", muted=True))
    return _svg(title, height, body)


def insight_charts(data: Insights) -> dict[str, Markup]:
    """The Insights page's charts and their legends, by name."""
    days = data.days
    weeks = data.supersede.weeks
    return {
        "inflow": stacked_columns(
            data.inflow, QUEUE_VERDICTS, label_every=7, title=f"Queue rows raised per day, last {days} days, by verdict"
        ),
        "inflow_legend": legend(present(data.inflow, QUEUE_VERDICTS)),
        "actions": stacked_columns(
            data.actions,
            AUTO_VERDICTS,
            label_every=max(len(data.actions) // 4, 1),
            title="Automatic invalidations per run, by verdict",
        ),
        "actions_legend": legend(present(data.actions, AUTO_VERDICTS)),
        "dismissals": stacked_columns(
            data.dismissals,
            DISMISSAL_KINDS,
            label_every=7,
            title=f"Queue rows dismissed by self-healing per day, last {days} days",
        ),
        "dismissals_legend": legend(present(data.dismissals, DISMISSAL_KINDS)),
        "tokens": horizontal_bars(
            [(f"{t.owner} · {t.purpose}", t.total) for t in data.tokens],
            title="Judge tokens by owner and purpose",
            category="duplicate",
        ),
        "supersede": share_bar(
            data.supersede.declared,
            data.supersede.total,
            title=f"Share of writes that declared a supersede, last {days} days",
        ),
        "supersede_weeks": stacked_columns(
            weeks, ("declared", "plain"), height=120, title="Writes per week, declared supersede or not"
        ),
        "supersede_legend": legend(present(weeks, ("declared", "plain"))),
        "capture": stacked_columns(
            data.capture.days,
            CAPTURE_OUTCOMES,
            label_every=7,
            title=f"Statements extracted from conversations per day, last {days} days, by outcome",
        ),
        "capture_legend": legend(present(data.capture.days, CAPTURE_OUTCOMES)),
    }
