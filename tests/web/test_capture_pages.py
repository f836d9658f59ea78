"""Captured memories on the dashboard, in process: their badge, and the Insights panel on capture."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from tests.capture.helpers import statement, with_model
from tests.web.helpers import unique
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.capture.ingest import ingest
from zero_memory.capture.models import IngestRequest
from zero_memory.judge.fake import FakeJudge


def captured(app: App, *statements: dict[str, str]) -> str:
    """Send one chunk whose extraction says ``statements``; the project it went to."""
    with_model(app, FakeJudge([list(statements)]))
    result = ingest(
        app,
        Caller("alice", client="claude-code"),
        IngestRequest(transcript_chunk=unique("user: how do we ship?"), conversation_id="c", project_hint="api"),
    )
    app.wait_idle()
    return result.scope


def test_a_captured_memory_carries_the_provisional_extraction_badge(alice_web: TestClient, app: App) -> None:
    text = unique("The api ships with make ship.")
    scope = captured(app, statement(text, "convention"))
    listing = alice_web.get("/memories", params={"q": text.split("[")[0], "scope": scope}).text
    badge = '<span class="badge rank-0" title="rank 0 (provisional, written by system)">provisional · extraction</span>'
    assert badge in listing
    memory_id = re.search(r'href="/memories/(mem_[0-9a-z]+)"', listing)
    assert memory_id is not None
    page = alice_web.get(f"/memories/{memory_id.group(1)}").text
    assert badge in page and "<dt>conversation id</dt>" in page and "<dt>chunk hash</dt>" in page


def test_insights_show_what_capture_made_and_what_it_cost(alice_web: TestClient, app: App) -> None:
    captured(app, statement(unique("The api listens on 8080.")), statement(unique("Deploys run from main.")))
    page = alice_web.get("/insights").text
    panel = page[page.index("Captured from conversations") :]
    assert re.search(r'<th scope="row">created</th><td>2</td>', panel)
    assert re.search(r'<th scope="row">chunks done</th><td>1</td>', panel)
    assert re.search(r'<th scope="row">extraction calls</th><td>1</td>', panel)
    assert re.search(r'<th scope="row">extraction tokens in</th><td>100</td>', panel)
    assert re.search(r'<th scope="row">spent today</th><td>120 of 200,000</td>', panel)
    assert '<svg class="chart"' in panel
