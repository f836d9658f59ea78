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

from zero_memory.web.insights import AUTO_VERDICTS, DISMISSAL_KINDS, QUEUE_VERDICTS, Column, Insights

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
}
FALLBACK = ("#7d9bb5", "#c49a6c", "#8fb39a", "#b58fa8", "#a8a67a")
WIDTH = 560
FONT = 12
CHAR_W = 6.6  # average glyph width at FONT px, for laying out labels without measuring them


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


def _legend(categories: Sequence[str], y: float) -> tuple[list[str], float]:
    """Swatches and names in rows across the width; returns the parts and the height they took."""
    parts: list[str] = []
    x, row = 0.0, 0
    for name in categories:
        width = 16 + len(name) * CHAR_W + 14
        if x + width > WIDTH and x > 0:
            x, row = 0.0, row + 1
        top = y + row * 18
        parts.append(f'<rect x="{_num(x)}" y="{_num(top)}" width="10" height="10" rx="2" fill="{color(name)}"/>')
        parts.append(_text(x + 15, top + 9.5, name.replace("_", " ")))
        x += width
    return parts, (row + 1) * 18 if categories else 0


def stacked_columns(
    columns: Sequence[Column], categories: Sequence[str], *, title: str, height: int = 170, label_every: int = 1
) -> Markup:
    """One column per entry, its categories stacked bottom-up in ``categories`` order."""
    left, top, bottom = 34, 8, 22
    plot_h = height - top - bottom
    shown = [c for c in categories if any(col.values.get(c) for col in columns)]
    others = sorted({k for col in columns for k, v in col.values.items() if v and k not in categories})
    order = shown + others
    peak = nice_ceiling(max((col.total for col in columns), default=0))
    body: list[str] = []
    for fraction in (0, 0.5, 1):
        y = top + plot_h * (1 - fraction)
        body.append(f'<line x1="{left}" x2="{WIDTH}" y1="{_num(y)}" y2="{_num(y)}" stroke="currentColor" '
                    f'stroke-opacity="{0.35 if fraction == 0 else 0.12}"/>')
        body.append(_text(left - 6, y + 4, _num(peak * fraction), anchor="end", muted=True))
    if columns:
        slot = (WIDTH - left) / len(columns)
        bar = max(min(slot * 0.7, 40), 1)
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
            if i % max(label_every, 1) == 0 or i == len(columns) - 1:
                body.append(_text(x + bar / 2, height - 6, col.label, anchor="middle", muted=True))
    if not any(col.total for col in columns):
        body.append(_text(left + (WIDTH - left) / 2, top + plot_h / 2, "nothing yet", anchor="middle", muted=True))
    legend, legend_h = _legend(order, height + 6)
    return _svg(title, height + 6 + legend_h, body + legend)


def horizontal_bars(rows: Sequence[tuple[str, int]], *, title: str, category: str = "") -> Markup:
    """One labelled bar per row, longest first as given, the value at its end."""
    label_w = min(max((len(label) for label, _ in rows), default=0) * CHAR_W + 12, WIDTH * 0.45)
    value_w = 64
    row_h = 24
    peak = max((value for _, value in rows), default=0) or 1
    body: list[str] = []
    for i, (label, value) in enumerate(rows):
        y = i * row_h
        span = (WIDTH - label_w - value_w) * value / peak
        body.append(_text(label_w - 8, y + 16, label, anchor="end"))
        body.append(_rect(label_w, y + 5, span, 14, color(category or label), f"{label}: {value:,}"))
        body.append(_text(label_w + span + 6, y + 16, f"{value:,}", muted=True))
    if not rows:
        body.append(_text(WIDTH / 2, 16, "nothing yet", anchor="middle", muted=True))
    return _svg(title, max(len(rows), 1) * row_h + 4, body)


def share_bar(part: int, whole: int, *, title: str, part_name: str = "declared", rest_name: str = "plain") -> Markup:
    """A single 100% bar: ``part`` of ``whole``, with the percentage written on it."""
    height = 30
    body: list[str] = []
    if whole:
        split = WIDTH * part / whole
        body.append(_rect(0, 4, split, 22, color(part_name), f"{part} of {whole} {part_name.replace('_', ' ')}"))
        body.append(_rect(split, 4, WIDTH - split, 22, color(rest_name), f"{whole - part} of {whole} {rest_name}"))
        body.append(_text(8, 20, f"{part / whole:.0%}"))
    else:
        body.append(_rect(0, 4, WIDTH, 22, color(rest_name), "no writes yet"))
        body.append(_text(8, 20, "no writes yet", muted=True))
    return _svg(title, height, body)


def insight_charts(data: Insights) -> dict[str, Markup]:
    """The Insights page's charts, by name."""
    days = data.days
    return {
        "inflow": stacked_columns(data.inflow, QUEUE_VERDICTS, title=f"Queue rows raised per day, last {days} days, "
                                  "by verdict", label_every=7),
        "actions": stacked_columns(data.actions, AUTO_VERDICTS, title="Automatic invalidations per run, by verdict",
                                   label_every=max(len(data.actions) // 5, 1)),
        "dismissals": stacked_columns(data.dismissals, DISMISSAL_KINDS, title=f"Queue rows dismissed by "
                                      f"self-healing per day, last {days} days", label_every=7),
        "tokens": horizontal_bars([(f"{t.owner} · {t.purpose}", t.total) for t in data.tokens],
                                  title="Judge tokens by owner and purpose", category="duplicate"),
        "supersede": share_bar(data.supersede.declared, data.supersede.total,
                               title=f"Share of writes that declared a supersede, last {days} days"),
        "supersede_weeks": stacked_columns(data.supersede.weeks, ("declared", "plain"),
                                           title="Writes per week, declared supersede or not", height=120),
    }
