"""Server-side SVG charts: well-formed, scaled, labelled, escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from zero_memory.insights import Column, Insights, Share
from zero_memory.web import charts

SVG = "{http://www.w3.org/2000/svg}"


def parse(markup: str) -> ET.Element:
    return ET.fromstring(str(markup))


def bars(svg: ET.Element) -> list[ET.Element]:
    """The data rectangles (those carrying a tooltip)."""
    return [r for r in svg.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]


@pytest.mark.parametrize(("value", "top"), [(0, 1), (1, 1), (3, 5), (7, 10), (12, 20), (250, 500), (1001, 2000)])
def test_an_axis_tops_out_at_a_round_number(value: float, top: int) -> None:
    assert charts.nice_ceiling(value) == top


def test_stacked_columns_stack_each_category_in_order_and_scale_to_the_peak() -> None:
    svg = parse(
        charts.stacked_columns(
            [Column("03-01", {"duplicate": 2, "contradiction": 3}), Column("03-02", {})],
            ("duplicate", "contradiction"),
            title="Inflow",
        )
    )
    assert svg.get("role") == "img" and svg.findtext(f"{SVG}title") == "Inflow"
    drawn = bars(svg)
    assert [r.findtext(f"{SVG}title") for r in drawn] == ["03-01: 2 duplicate", "03-01: 3 contradiction"]
    duplicate, contradiction = (float(r.get("height", 0)) for r in drawn)
    assert contradiction == pytest.approx(duplicate * 1.5, rel=0.01)
    assert float(drawn[1].get("y", 0)) + contradiction == pytest.approx(float(drawn[0].get("y", 0)), abs=0.2)
    assert {r.get("fill") for r in drawn} == {charts.PALETTE["duplicate"], charts.PALETTE["contradiction"]}
    labels = [t.text for t in svg.iter(f"{SVG}text")]
    assert "03-01" in labels and labels.count("5") == 1 and "0" in labels


def test_the_axis_shows_whole_numbers_only() -> None:
    one = parse(charts.stacked_columns([Column("d", {"duplicate": 1})], ("duplicate",), title="t"))
    assert [t.text for t in one.iter(f"{SVG}text")][:2] == ["0", "1"]
    twenty = parse(charts.stacked_columns([Column("d", {"duplicate": 13})], ("duplicate",), title="t"))
    assert [t.text for t in twenty.iter(f"{SVG}text")][:3] == ["0", "10", "20"]


def test_the_legend_names_the_categories_present_in_the_given_order() -> None:
    columns = [Column("d", {"contradiction": 1, "zeta": 2, "duplicate": 1, "unjudged": 0})]
    assert charts.present(columns, ("duplicate", "unjudged", "contradiction")) == ["duplicate", "contradiction", "zeta"]
    legend = ET.fromstring(str(charts.legend(["duplicate", "stale_suspect"])))
    assert [li.text if li.text else "".join(li.itertext()) for li in legend] == ["duplicate", "stale suspect"]
    assert legend.find("li/svg/rect").get("fill") == charts.PALETTE["duplicate"]
    assert charts.legend([]) == ""


def test_an_empty_chart_says_so() -> None:
    svg = parse(charts.stacked_columns([Column("03-01")], ("duplicate",), title="Inflow"))
    assert not bars(svg)
    assert "nothing yet" in [t.text for t in svg.iter(f"{SVG}text")]
    assert "nothing yet" in [t.text for t in parse(charts.horizontal_bars([], title="Tokens")).iter(f"{SVG}text")]


def test_horizontal_bars_are_as_long_as_their_value() -> None:
    svg = parse(charts.horizontal_bars([("alice · scan", 300), ("alice · rescan", 100)], title="Tokens"))
    long, short = (float(r.get("width", 0)) for r in bars(svg))
    assert long == pytest.approx(short * 3, rel=0.01)
    assert "300" in [t.text for t in svg.iter(f"{SVG}text")]


def test_the_share_bar_writes_its_percentage() -> None:
    svg = parse(charts.share_bar(1, 4, title="Share"))
    declared, plain = (float(r.get("width", 0)) for r in bars(svg))
    assert plain == pytest.approx(declared * 3, rel=0.01)
    assert "25%" in [t.text for t in svg.iter(f"{SVG}text")]
    assert "no writes yet" in [t.text for t in parse(charts.share_bar(0, 0, title="Share")).iter(f"{SVG}text")]


def test_labels_and_titles_are_escaped() -> None:
    markup = charts.horizontal_bars([('<script>alert(1)</script> & "x"', 1)], title="a <b> title")
    assert "<script>" not in markup and "<b>" not in markup
    svg = parse(markup)
    assert svg.get("aria-label") == "a <b> title"
    assert '<script>alert(1)</script> & "x"' in [t.text for t in svg.iter(f"{SVG}text")]


def test_charts_use_no_inline_styles_so_the_csp_needs_none() -> None:
    data = Insights(
        days=7,
        inflow=[Column("03-01", {"duplicate": 1})],
        actions=[],
        dismissals=[],
        tokens=[],
        supersede=Share(1, 2, [Column("wk", {"declared": 1, "plain": 1})]),
    )
    for markup in charts.insight_charts(data).values():
        if not markup:
            continue
        svg = parse(markup)
        assert all("style" not in element.attrib for element in svg.iter())


def test_unknown_categories_get_a_stable_colour() -> None:
    assert charts.color("mystery") == charts.color("mystery")
    assert charts.color("mystery").startswith("#")
