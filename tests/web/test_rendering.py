"""The small helpers of the page frame: ages, links, safe redirects."""

from __future__ import annotations

import pytest

from zero_memory.web.rendering import age, local_path, percent, query, when


@pytest.mark.parametrize(
    ("days", "text"),
    [
        (0, "just now"),
        (0.02, "28 min"),
        (0.99, "24 h"),
        (1.97, "47 h"),
        (5.999, "6 d"),
        (61, "2 mo"),
        (800, "2.2 y"),
        (None, ""),
    ],
)
def test_ages_read_in_the_largest_natural_unit(days: float | None, text: str) -> None:
    assert age(days) == text


def test_timestamps_and_shares_are_shown_plainly() -> None:
    assert when("2025-03-01T14:03:59.123456Z") == "2025-03-01 14:03 UTC"
    assert (percent(0.856), percent(None)) == ("86%", "")


def test_links_keep_only_the_parameters_that_say_something() -> None:
    link = query("/queue", status="pending", verdict=None, origin="", cursor="dsp_1")
    assert link == "/queue?status=pending&cursor=dsp_1"
    assert query("/memories") == "/memories"


@pytest.mark.parametrize(
    "target", ["https://evil.example", "//evil.example", "/\\evil", "/ok\nSet-Cookie: x", "", None, 42]
)
def test_only_paths_on_this_site_are_redirect_targets(target: object) -> None:
    assert local_path(target, "/queue") == "/queue"


def test_a_local_path_with_its_query_is_kept() -> None:
    assert local_path("/memories?q=port&lifecycle=all", "/queue") == "/memories?q=port&lifecycle=all"
